// What a collective's algorithm choice and schedule need to know of the platform: its links as
// a lowering::CollectiveNetwork, and the policy per communication kind that `twocs run` lowers
// with (collective_policy.hpp). `twocs collbench` goes through the same functions.
#pragma once

#include <cstdint>

#include <twocs/hardware/cluster.hpp>
#include <twocs/lowering/collective_algorithm.hpp>
#include <twocs/lowering/collective_algorithm_choice.hpp>
#include <twocs/lowering/collective_policy.hpp>
#include <twocs/platform/topology.hpp>

namespace twocs::platform {

/// The links of `topology` as the collective choice sees them.
[[nodiscard]] lowering::CollectiveNetwork collective_network(const Topology& topology);

/// The policy of `cluster` for a job of `devices` devices: per communication kind the algorithm
/// of `cluster.network.collectives` (absent kinds: automatic), chosen on its network.
[[nodiscard]] lowering::CollectivePolicy collective_policy(const hardware::ClusterSpec& cluster, std::int64_t devices);

/// The links of a group of the first `ranks` devices of `topology` (placed in node order).
[[nodiscard]] lowering::CollectiveContext collective_context(const Topology& topology, std::int32_t ranks);

/// The schedule's shape for that group: across nodes one channel per NIC, so that each ring
/// leaves every node through its own NIC as NCCL's rings do; within a node one channel.
[[nodiscard]] lowering::ScheduleShape schedule_shape(const Topology& topology, std::int32_t ranks);

} // namespace twocs::platform
