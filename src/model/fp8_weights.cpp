// Bytes of the linear layers' weights under each precision (docs/memory-model.md, "FP8 weights").
#include <twocs/model/fp8_weights.hpp>

#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "host_work.hpp"
#include "op_builders.hpp"

namespace twocs::model {
namespace {

bool fp8_primary_weights(const TrainingPlan& plan) { return plan.dtype == Dtype::fp8 && plan.fp8_params; }

} // namespace

double weight_element_size(const TrainingPlan& plan) { return plan.dtype == Dtype::fp32 ? 4.0 : 2.0; }

double resident_linear_weight_bytes(const TrainingPlan& plan) {
  // FP8 primary weights: the FP8 weight and the transpose the backward's dgrad GEMM reads, made
  // after each gather (Megatron-LM megatron/core/fp8_utils.py post_all_gather_processing at
  // d98e8a6: "tensorwise: may need to create a transposed view to match backend GEMM").
  if (fp8_primary_weights(plan)) return 2.0;
  // Transformer Engine caches an FP8 weight and its transpose between the micro-batches of a step
  // when given is_first_microbatch (transformer_engine/pytorch/module/linear.py at 0004dbd,
  // get_fp8_weights_scratchpad: persistent weight1_fp8, weight1_t_fp8), which Megatron-Core
  // passes unless disable_parameter_transpose_cache (default False; extensions/transformer_engine.py).
  if (plan.dtype == Dtype::fp8 && plan.framework == Framework::megatron_lm) return weight_element_size(plan) + 2.0;
  return weight_element_size(plan);
}

double gathered_linear_weight_bytes(const TrainingPlan& plan) {
  // Megatron-LM --fp8-param-gather: "perform the param all-gather in fp8" (arguments.py at
  // d98e8a6); torchtitan: "cast Float8Linear.weight ... to float8 before FSDP all-gather"
  // (docs/float8.md).
  return fp8_primary_weights(plan) ? 1.0 : weight_element_size(plan);
}

double gathered_weight_bytes(const TrainingPlan& plan, std::int64_t parameters, std::int64_t linear) {
  return static_cast<double>(parameters - linear) * weight_element_size(plan) +
         static_cast<double>(linear) * gathered_linear_weight_bytes(plan);
}

bool quantizes_weights_per_step(const TrainingPlan& plan) {
  return plan.dtype == Dtype::fp8 && !plan.fp8_params && plan.framework == Framework::megatron_lm;
}

namespace {

/// `steps` with what `add(out, gemm, elements)` adds before each FP8 linear GEMM, once per GEMM (a
/// GEMM run in chunks beside tensor-parallel communication, async TP or Transformer Engine's
/// userbuffers, has one weight): `elements` its weights, W[k x n] of each batch entry (a grouped
/// GEMM's local experts).
template <class Add> StepSequence before_fp8_weights(const StepSequence& steps, Add add) {
  StepSequence out;
  out.reserve(steps.size() * 2);
  std::set<std::string> seen;
  for (const Step& step : steps) {
    const auto* gemm = std::get_if<ComputeOp>(&step);
    if (gemm != nullptr && gemm->kind == OpKind::gemm && gemm->dtype == Dtype::fp8 && gemm->gemm &&
        seen.insert(gemm->name).second)
      add(out, *gemm, static_cast<double>(gemm->gemm->batch * gemm->gemm->k * gemm->gemm->n));
    out.push_back(step);
  }
  return out;
}

/// Transformer Engine's quantization of a GEMM's weights: one per batch entry (Transformer Engine
/// quantizes a grouped GEMM's expert weights one by one, also under delayed scaling, whose fused
/// multi-tensor cast serves the inputs only: grouped_linear.py).
void add_weight_quantization(StepSequence& steps, const ComputeOp& gemm, double elements, const TrainingPlan& plan) {
  const std::int64_t weights = gemm.gemm->batch;
  const std::string name = gemm.name + ".weight";
  // Current scaling reads the weight for its amax first, then computes the scale
  // (Float8CurrentScalingQuantizer, as for activations: fp8_quantize.cpp); delayed scaling takes
  // the scale from the amax history and blockwise scaling computes each 128 x 128 block's scale
  // inside the quantize kernel.
  std::int64_t kernels = weights;
  if (plan.fp8_recipe == TrainingPlan::Fp8Recipe::tensorwise) {
    ComputeOp amax = detail::fp8_amax(name + ".fp8_amax", Pass::forward, elements);
    amax.kernels = static_cast<std::int32_t>(2 * weights); // zero the amax, read the weight
    amax.host_launches = detail::kernels_host_work(2 * weights);
    steps.emplace_back(std::move(amax));
    kernels = 2 * weights; // the scale, then the cast
  }
  // Read the 16-bit weight, write its FP8 copy and the transpose the dgrad GEMM reads (rowwise
  // and columnwise usage, both cached for the step).
  ComputeOp quantize = detail::fp8_quantize_both(name + ".fp8_quantize", Pass::forward, elements);
  quantize.kernels = static_cast<std::int32_t>(kernels);
  quantize.host_launches = detail::kernels_host_work(kernels);
  steps.emplace_back(std::move(quantize));
}

/// torchao's casts of a GEMM's weight: hp_tensor_to_float8_dynamic before a forward's GEMM (the
/// amax, a reduction, then the scaled cast; not with FSDP's float8 all-gather, whose gathered
/// weight is already FP8), the column-major copy before a dgrad's (either way).
void add_float8_weight_cast(StepSequence& steps, const ComputeOp& gemm, double elements, bool gathered_in_fp8) {
  if (gemm.pass == Pass::forward || gemm.pass == Pass::recompute) {
    if (gathered_in_fp8) return;
    const std::string name = gemm.name + ".weight";
    steps.emplace_back(detail::fp8_amax(name + ".fp8_amax", gemm.pass, elements));
    steps.emplace_back(detail::fp8_cast(name + ".fp8_cast", gemm.pass, elements));
  } else if (gemm.name.ends_with(".dgrad")) {
    const std::string layer = gemm.name.substr(0, gemm.name.size() - std::string_view(".dgrad").size());
    steps.emplace_back(detail::memory_bound(layer + ".weight.fp8_transpose", OpKind::elementwise, gemm.pass,
                                            Dtype::bf16, elements, 2.0, 0.0));
  }
}

} // namespace

StepSequence first_micro_batch_forward(const StepSequence& forward, const TrainingPlan& plan) {
  if (!quantizes_weights_per_step(plan)) return forward;
  return before_fp8_weights(forward, [&](StepSequence& out, const ComputeOp& gemm, double elements) {
    add_weight_quantization(out, gemm, elements, plan);
  });
}

bool casts_weights_every_pass(const TrainingPlan& plan) {
  return plan.dtype == Dtype::fp8 && !plan.fp8_params && plan.framework == Framework::fsdp;
}

bool copies_fp8_weights_for_dgrad(const TrainingPlan& plan) {
  return plan.dtype == Dtype::fp8 && plan.framework == Framework::fsdp;
}

StepSequence with_float8_weight_casts(const StepSequence& steps, const TrainingPlan& plan) {
  if (!copies_fp8_weights_for_dgrad(plan)) return steps;
  const bool gathered_in_fp8 = plan.fp8_params;
  return before_fp8_weights(steps, [gathered_in_fp8](StepSequence& out, const ComputeOp& gemm, double elements) {
    add_float8_weight_cast(out, gemm, elements, gathered_in_fp8);
  });
}

} // namespace twocs::model
