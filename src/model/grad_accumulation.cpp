#include <twocs/model/grad_accumulation.hpp>

#include "op_builders.hpp"

namespace twocs::model {

GradAccumulationPass grad_accumulation_pass(const TrainingPlan& plan) {
  const double e = element_size(plan.dtype);
  switch (plan.framework) {
  case Framework::megatron_lm:
    // Megatron-LM's fused_weight_gradient_mlp_cuda accumulates into main_grad in the wgrad GEMM
    // (megatron/core/tensor_parallel/layers.py, gradient_accumulation_fusion).
    if (plan.grad_accumulation_fusion) return {};
    break;
  case Framework::megatron_deepspeed:
    // deepspeed/runtime/pipe/engine.py _exec_backward_pass calls BF16_Optimizer.update_hp_grads
    // after every micro-batch: hp_grad.add_(lp.grad.to(fp32)) (DeepSpeed PR #1801, for BLOOM).
    if (plan.dtype == Dtype::bf16) return {2 + 4 + 4 + 4 + 4, true};
    break;
  case Framework::fsdp: break;
  }
  // Megatron-LM's DDP hook: param.main_grad.add_(param.grad) after every backward
  // (megatron/model/distributed.py, _make_param_hook).
  if (plan.dtype != Dtype::fp32 && plan.grad_reduce_element_size() == 4) return {e + 4 + 4, true};
  // PyTorch's AccumulateGrad: the first backward stores the gradient, later ones add in place.
  return {3 * e, false};
}

StepSequence grad_accumulation_steps(std::int64_t parameters, const TrainingPlan& plan) {
  const GradAccumulationPass pass = grad_accumulation_pass(plan);
  if (pass.bytes_per_parameter == 0 || parameters == 0) return {};
  StepSequence steps;
  steps.push_back(detail::memory_bound("grad.accumulate", OpKind::elementwise, Pass::backward, plan.dtype,
                                       static_cast<double>(parameters), pass.bytes_per_parameter, 1));
  return steps;
}

} // namespace twocs::model
