// Private: Transformer Engine's quantization of a linear layer's GEMM input to FP8 under the
// workload's recipe (docs/simulation.md, "FP8"): what kernels and collectives it runs beside the
// GEMM, by where its input comes from.
#pragma once

#include <string>

#include <twocs/model/layer_ops.hpp>

namespace twocs::model::detail {

/// Where a quantized tensor comes from, which decides what computes its amax.
enum class Fp8Source {
  /// A norm inside TE's LayerNormLinear: under delayed scaling the norm writes FP8 itself; under
  /// current scaling it writes BF16 and the amax, and a cast follows.
  norm,
  /// Any other kernel (attention, Megatron-Core's own activation, an output gradient): a cast
  /// after it; under current scaling an amax pass before the cast.
  standalone,
};

/// The quantization of `elements` BF16 values to FP8 for the GEMM `name` (`name.fp8_cast`, under
/// current scaling also `name.fp8_amax` and `name.fp8_amax.all_reduce`). `tp_amax`: the
/// quantizer reduces its amax over the tensor-parallel group under sequence parallelism (TE's
/// column-parallel input and row-parallel output gradient). Nothing without FP8 linear layers.
void add_fp8_quantize(StepSequence& steps, const LayerShape& shape, const std::string& name, Pass pass, double elements,
                      Fp8Source source, bool tp_amax = false);

} // namespace twocs::model::detail
