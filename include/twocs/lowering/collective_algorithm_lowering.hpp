// A collective schedule (collective_algorithm.hpp) added to a task graph: one transfer task per
// message, its predecessors as dependencies, and per rank the tasks it enters and leaves by.
#pragma once

#include <span>
#include <vector>

#include <twocs/lowering/collective_algorithm.hpp>
#include <twocs/lowering/task_sink.hpp>

namespace twocs::lowering {

struct LoweredSchedule {
  std::vector<TaskId> tasks;                // one per message, in schedule order
  std::vector<std::vector<TaskId>> entries; // per rank: its messages (sent or received) that wait for nothing
  std::vector<std::vector<TaskId>> exits;   // per rank: its last send and its last receive
};

/// Adds `schedule` to `sink`, rank r being `devices[r]`; every transfer carries `tag` and copies
/// `prototype` (group, collective instance) with peer, bytes and step from its message.
LoweredSchedule add_schedule(TaskSink& sink, const CollectiveSchedule& schedule, std::span<const DeviceId> devices,
                             const TaskTag& tag, Transfer prototype);

} // namespace twocs::lowering
