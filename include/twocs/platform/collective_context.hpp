// What a collective's algorithm choice and schedule need to know of the platform: the group's
// placement on nodes and its links (collective_algorithm_choice.hpp, collective_algorithm.hpp).
#pragma once

#include <cstdint>

#include <twocs/lowering/collective_algorithm.hpp>
#include <twocs/lowering/collective_algorithm_choice.hpp>
#include <twocs/platform/topology.hpp>

namespace twocs::platform {

/// The links of a group of the first `ranks` devices of `topology` (placed in node order).
[[nodiscard]] lowering::CollectiveContext collective_context(const Topology& topology, std::int32_t ranks);

/// The schedule's shape for that group: across nodes one channel per NIC, so that each ring
/// leaves every node through its own NIC as NCCL's rings do; within a node one channel.
[[nodiscard]] lowering::ScheduleShape schedule_shape(const Topology& topology, std::int32_t ranks);

} // namespace twocs::platform
