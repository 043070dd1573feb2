// Consistency checks of a cluster description, alone and against a training plan. Violations
// throw InputError naming the dotted key at fault ("cluster.nodes") and the fix.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include <twocs/hardware/cluster.hpp>
#include <twocs/model/training_plan.hpp>

namespace twocs::hardware {

void validate(const ClusterSpec& cluster);

/// The collective algorithms `collectives` names (per communication kind, read at `key_prefix`:
/// "cluster.network.collectives" or "training.collectives") can run on `cluster`: an in-network
/// reduction needs a switch that reduces (node.interconnect or cluster.network
/// in_network_efficiency), NVLS_TREE the node's.
void validate_collectives(const ClusterSpec& cluster, const std::map<std::string, std::string>& collectives,
                          std::string_view key_prefix);

/// The plan needs no more devices than the cluster has, and a peak rate for its dtype.
void validate_fit(const ClusterSpec& cluster, const model::TrainingPlan& plan);

} // namespace twocs::hardware
