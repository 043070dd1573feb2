// Private: the checks of the schedules that split a backward into its input-gradient and
// weight-gradient passes (training.pipeline_schedule: zb-h1, dualpipe) against the rest of the plan.
#pragma once

#include <twocs/model/training_plan.hpp>
#include <twocs/model/transformer.hpp>

namespace twocs::model::detail {

/// Throws InputError for a plan the schedule's authors do not run or twocs does not simulate.
void validate_split_schedules(const TrainingPlan& plan);

} // namespace twocs::model::detail
