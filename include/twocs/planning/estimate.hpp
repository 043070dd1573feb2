// The closed-form iteration time a plan search ranks candidates by: the compute and
// communication of projection::project (`twocs analyze`) plus what the closed form leaves out,
// the pipeline bubble and how much data-parallel communication the last backward pass hides.
#pragma once

#include <twocs/model/training_plan.hpp>
#include <twocs/projection/closed_form.hpp>
#include <twocs/units/quantity.hpp>

namespace twocs::planning {

struct Estimate {
  units::Seconds time;        // compute + tensor and pipeline communication + bubble + exposed data comm
  units::Seconds lower_bound; // max(compute, communication): full overlap, no bubble
};

[[nodiscard]] Estimate estimate_iteration(const projection::Projection& projection, const model::TrainingPlan& plan);

} // namespace twocs::planning
