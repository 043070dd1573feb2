// Private: the checks of training.fp8_params against the rest of the plan.
#pragma once

#include <twocs/model/training_plan.hpp>

namespace twocs::model::detail {

/// Throws InputError where the frameworks refuse FP8 primary weights: without FP8 training,
/// in Megatron-DeepSpeed, and in Megatron-LM without a sharded optimizer.
void validate_fp8_params(const TrainingPlan& plan);

} // namespace twocs::model::detail
