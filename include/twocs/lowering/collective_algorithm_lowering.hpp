// A collective schedule (collective_algorithm.hpp) added to a task graph: one transfer task per
// message, its predecessors as dependencies, and per rank the tasks it enters and leaves by.
#pragma once

#include <span>
#include <vector>

#include <twocs/lowering/collective_algorithm.hpp>
#include <twocs/lowering/task_graph.hpp>

namespace twocs::lowering {

struct LoweredSchedule {
  std::vector<TaskId> tasks;                // one per message, in schedule order
  std::vector<std::vector<TaskId>> entries; // per rank: its messages (sent or received) that wait for nothing
  std::vector<std::vector<TaskId>> exits;   // per rank: its last send and its last receive
};

/// Adds `schedule` to `graph`, rank r being `devices[r]`; every task copies `prototype` (stream,
/// group, labels) with device, peer, bytes and step from its message.
LoweredSchedule add_schedule(TaskGraph& graph, const CollectiveSchedule& schedule, std::span<const DeviceId> devices,
                             Task prototype);

} // namespace twocs::lowering
