// training.fp8_params and training.fp8_recipe: the combinations the frameworks refuse.
#include "validate_fp8_params.hpp"

#include <fmt/format.h>

#include <twocs/error.hpp>

namespace twocs::model::detail {

void validate_fp8_params(const TrainingPlan& plan) {
  if (plan.fp8_recipe != TrainingPlan::Fp8Recipe::delayed && plan.dtype != Dtype::fp8)
    throw InputError(fmt::format("training.fp8_recipe says how FP8 tensors are scaled, but training.dtype is {}",
                                 to_string(plan.dtype)),
                     "training.fp8_recipe", "set training.dtype: fp8, or remove fp8_recipe");
  if (!plan.fp8_params) return;
  constexpr const char* key = "training.fp8_params";
  if (plan.dtype != Dtype::fp8)
    throw InputError(fmt::format("training.fp8_params keeps the linear layers' weights in FP8 for FP8 training, but "
                                 "training.dtype is {}",
                                 to_string(plan.dtype)),
                     key, "set training.dtype: fp8, or remove fp8_params");
  if (plan.framework == Framework::megatron_deepspeed)
    throw InputError("training.fp8_params is Megatron-LM's --fp8-param-gather (or torchtitan's FP8 all-gather "
                     "under FSDP), and Megatron-DeepSpeed has neither",
                     key, "use framework: megatron-lm or fsdp, or remove fp8_params");
  // Megatron-LM arguments.py (d98e8a6): "--fp8-param-gather only supported with distributed
  // optimizer, torch fsdp2, megatron fsdp, or inference mode".
  if (plan.framework == Framework::megatron_lm && plan.optimizer.sharding == OptimizerSharding::none)
    throw InputError("training.fp8_params (Megatron-LM's --fp8-param-gather) needs the distributed optimizer, and "
                     "training.optimizer.sharding is none",
                     key, "set training.optimizer.sharding: optimizer, or remove fp8_params");
}

} // namespace twocs::model::detail
