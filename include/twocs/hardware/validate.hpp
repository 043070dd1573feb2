// Consistency checks of a cluster description, alone and against a training plan. Violations
// throw InputError naming the dotted key at fault ("cluster.nodes") and the fix.
#pragma once

#include <twocs/hardware/cluster.hpp>
#include <twocs/model/training_plan.hpp>

namespace twocs::hardware {

void validate(const ClusterSpec& cluster);

/// The plan needs no more devices than the cluster has, and a peak rate for its dtype.
void validate_fit(const ClusterSpec& cluster, const model::TrainingPlan& plan);

} // namespace twocs::hardware
