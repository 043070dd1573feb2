// Private: the text forms shared by profiles (CSV) and a platform's measured table (YAML):
// the kernel kind ("gemm", "softmax", ...) and its shape, a comma-separated list of key=value
// counts: "m=4096,n=4096,k=4096" (batched_gemm adds "batch=32") for GEMMs, "bytes=402653184"
// (optionally ",flops=...") for memory-bound kernels, "heads=32,seq=8192,head_dim=128,causal=1"
// (batch x heads, sequence, head dimension, mask 0 or 1) for the fused attention kernels
// flash_forward and flash_backward (docs/operator-models.md, "Profiles").
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include <twocs/hardware/kernel_params.hpp>
#include <twocs/model/operator.hpp>

namespace twocs::config::detail {

/// A malformed shape: `offset` is the 0-based character of the text where it went wrong.
class ShapeError : public std::runtime_error {
public:
  ShapeError(std::string message, std::size_t offset, std::string fix)
      : std::runtime_error(std::move(message)), offset_(offset), fix_(std::move(fix)) {}
  [[nodiscard]] std::size_t offset() const { return offset_; }
  [[nodiscard]] const std::string& fix() const { return fix_; }

private:
  std::size_t offset_;
  std::string fix_;
};

/// The kernel kinds a profile may name, in model::OpKind order.
[[nodiscard]] std::span<const std::string_view> kernel_kind_names();
[[nodiscard]] std::optional<model::OpKind> parse_kernel_kind(std::string_view name);

/// Fills the shape of `measurement` (whose kind is set) from `text`; throws ShapeError.
void parse_kernel_shape(std::string_view text, hardware::KernelMeasurement& measurement);

/// The shape of `measurement` in the same text form.
[[nodiscard]] std::string format_kernel_shape(const hardware::KernelMeasurement& measurement);

} // namespace twocs::config::detail
