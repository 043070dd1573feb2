// Numeric formats of training (the contract's training.dtype).
#pragma once

#include <optional>
#include <string_view>

#include <twocs/units/quantity.hpp>

namespace twocs::model {

enum class Dtype { fp32, bf16, fp16, fp8 };

inline constexpr Dtype all_dtypes[] = {Dtype::fp32, Dtype::bf16, Dtype::fp16, Dtype::fp8};

/// Bytes per element: fp32 4, bf16/fp16 2, fp8 1 (IEEE 754; Micikevicius et al. 2022 for fp8).
[[nodiscard]] constexpr double element_size(Dtype d) {
  switch (d) {
  case Dtype::fp32: return 4.0;
  case Dtype::bf16:
  case Dtype::fp16: return 2.0;
  case Dtype::fp8: return 1.0;
  }
  return 4.0;
}

/// The size in bytes of `elements` values of type `d`.
[[nodiscard]] constexpr units::Bytes size_of(double elements, Dtype d) {
  return units::Bytes(elements * element_size(d));
}

/// The dtype of activations and of the messages that carry them: FP8 training keeps them in
/// BF16, as Transformer Engine does by default (only the linear layers' GEMM inputs are cast to
/// FP8 inside the layer; docs/simulation.md, "FP8").
[[nodiscard]] constexpr Dtype activation_dtype(Dtype training) {
  return training == Dtype::fp8 ? Dtype::bf16 : training;
}

[[nodiscard]] constexpr std::string_view to_string(Dtype d) {
  switch (d) {
  case Dtype::fp32: return "fp32";
  case Dtype::bf16: return "bf16";
  case Dtype::fp16: return "fp16";
  case Dtype::fp8: return "fp8";
  }
  return "?";
}

[[nodiscard]] constexpr std::optional<Dtype> parse_dtype(std::string_view s) {
  for (Dtype d : all_dtypes)
    if (to_string(d) == s) return d;
  return std::nullopt;
}

} // namespace twocs::model
