// Private: Transformer Engine's quantization of a linear layer's GEMM input to FP8 under the
// workload's recipe (docs/simulation.md, "FP8"): what kernels and collectives it runs beside the
// GEMM, by where its input comes from.
#pragma once

#include <optional>
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
/// Under Transformer Engine the cast also writes the transpose the weight-gradient GEMM reads
/// (te_writes_transpose), 4 bytes an element, unless `gathered_in_fp8`: a tensor all-gathered in
/// FP8 before its GEMM is cast row-wise only, and its transpose is made after the gather
/// (fp8_transpose_for_wgrad).
void add_fp8_quantize(StepSequence& steps, const LayerShape& shape, const std::string& name, Pass pass, double elements,
                      Fp8Source source, bool tp_amax = false, bool gathered_in_fp8 = false);

/// Whether Transformer Engine's cast of a GEMM input writes its FP8 transpose too: TE 1.x's
/// fused cast-transpose for the inputs it does not gather and for every output gradient
/// (module/linear.py fp8_cast_transpose_fused, module/base.py grad_output_preprocess at v1.10);
/// TE 2.x's quantizers with row-wise and column-wise usage, the column-wise data on Hopper being
/// the transpose (module/linear.py:386-436, 899-911 at d0067d0). torchao's casts (framework
/// fsdp) are not Transformer Engine's.
[[nodiscard]] bool te_writes_transpose(const LayerShape& shape);

/// The FP8 transpose of `elements` values (read 1, write 1 byte) that the weight-gradient GEMM of
/// `name` reads, where Transformer Engine makes it apart from the cast: after an FP8 all-gather
/// (`gathered_in_fp8`), and for the input LayerNormLinear's norm writes in FP8 itself under
/// delayed scaling (`tex.fp8_transpose(ln_out_total)`, module/layernorm_linear.py:570 at v1.10).
[[nodiscard]] std::optional<ComputeOp> fp8_transpose_for_wgrad(const LayerShape& shape, const std::string& name,
                                                               double elements, Fp8Source source, bool gathered_in_fp8);

} // namespace twocs::model::detail
