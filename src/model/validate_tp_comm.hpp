// Private: the checks of training.overlap.tp_comm against the rest of the plan.
#pragma once

#include <twocs/model/training_plan.hpp>

namespace twocs::model::detail {

/// Throws InputError where the framework named would refuse the overlap: without sequence
/// parallelism, Transformer Engine's userbuffers outside Megatron-Core, async TP outside
/// torchtitan's compiled FSDP2 runs.
void validate_tp_comm(const TrainingPlan& plan);

} // namespace twocs::model::detail
