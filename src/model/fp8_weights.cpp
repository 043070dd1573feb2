// Bytes of the linear layers' weights under each precision (docs/memory-model.md, "FP8 weights").
#include <twocs/model/fp8_weights.hpp>

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

} // namespace twocs::model
