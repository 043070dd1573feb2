// FP8 quantization of a linear layer's input by recipe. Delayed scaling (DelayedScaling) casts
// with the scale of earlier iterations and records the amax in the same kernel
// (transformer_engine/common/transpose/cast_transpose.cu), and LayerNormLinear's norm writes FP8
// directly. Current scaling (Float8CurrentScaling, Megatron-LM --fp8-recipe tensorwise, NeMo's
// and Megatron-Bridge's fp8_cs) needs this tensor's amax before it can cast
// (Float8CurrentScalingQuantizer::quantize_impl, pytorch/csrc/quantizer.cpp:980-1031 at d0067d0):
// a one-thread kernel zeroes the amax, an amax kernel reads the tensor
// (common/recipe/current_scaling.cu:73-108), the amax is optionally all-reduced (MAX), a
// one-thread kernel computes the scale (current_scaling.cu:331), then the cast reads the tensor
// again. A norm computes the amax itself (FUSED_NORM_AMAX_FP8, csrc/extensions/normalization.cpp:
// 95-118, 198-203) but writes BF16. The amax is all-reduced over the tensor-parallel group under
// sequence parallelism for the column-parallel input and the row-parallel output gradient
// (pytorch/module/linear.py:352-355, 810-825 at d0067d0; v2.8 linear.py:1637-1661): 4 bytes,
// stream-ordered before the cast. Blockwise scaling computes each block's scale inside its
// quantize kernel and is costed as delayed scaling's cast.
#include "fp8_quantize.hpp"

#include "host_work.hpp"
#include "op_builders.hpp"

namespace twocs::model::detail {
namespace {

constexpr double amax_bytes = 4.0; // one fp32 amax per tensor

bool current_scaling(const LayerShape& shape) { return shape.fp8_recipe == TrainingPlan::Fp8Recipe::tensorwise; }

/// The cast of `elements` values, with the transpose the weight gradient reads where TE writes it.
ComputeOp cast_of(const LayerShape& shape, const std::string& name, Pass pass, double elements, bool gathered_in_fp8) {
  if (te_writes_transpose(shape) && !gathered_in_fp8) return fp8_quantize_both(name + ".fp8_cast", pass, elements);
  return fp8_cast(name + ".fp8_cast", pass, elements);
}

} // namespace

bool te_writes_transpose(const LayerShape& shape) {
  return shape.fp8_linear && !shape.dtensor_tp && shape.fp8_transposes;
}

std::optional<ComputeOp> fp8_transpose_for_wgrad(const LayerShape& shape, const std::string& name, double elements,
                                                 Fp8Source source, bool gathered_in_fp8) {
  if (!te_writes_transpose(shape)) return std::nullopt;
  const bool norm_writes_fp8 = source == Fp8Source::norm && !current_scaling(shape);
  if (!gathered_in_fp8 && !norm_writes_fp8) return std::nullopt;
  return memory_bound(name + ".fp8_transpose", OpKind::elementwise, Pass::backward, Dtype::fp8, elements, 2.0, 0.0);
}

void add_fp8_quantize(StepSequence& steps, const LayerShape& shape, const std::string& name, Pass pass, double elements,
                      Fp8Source source, bool tp_amax, bool gathered_in_fp8) {
  if (!shape.fp8_linear) return;
  if (!current_scaling(shape)) {
    if (source == Fp8Source::standalone) steps.push_back(cast_of(shape, name, pass, elements, gathered_in_fp8));
    return;
  }
  if (source == Fp8Source::standalone) {
    // The amax zeroed and read off the tensor (2 bytes an element).
    ComputeOp amax = fp8_amax(name + ".fp8_amax", pass, elements);
    amax.kernels = 2;
    amax.host_launches = kernels_host_work(2);
    steps.push_back(std::move(amax));
  }
  if (tp_amax && shape.sequence_parallel && shape.tensor > 1)
    steps.push_back(collective(name + ".fp8_amax.all_reduce", Collective::all_reduce, CommGroup::tensor, pass,
                               units::Bytes(amax_bytes)));
  // The scale from the amax, then the cast; after a norm also the amax's zeroing before it.
  const std::int32_t kernels = source == Fp8Source::norm ? 3 : 2;
  ComputeOp cast = cast_of(shape, name, pass, elements, gathered_in_fp8);
  cast.kernels = kernels;
  cast.host_launches = kernels_host_work(kernels);
  steps.push_back(std::move(cast));
}

} // namespace twocs::model::detail
