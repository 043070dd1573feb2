// Private: a gate, a transfer of no bytes that the engine completes the moment it is ready, joining
// many tasks to many with one dependency each (a folded collective's entries and exits,
// CollectiveInstance::gated; the folded peers' traffic, peer_traffic.hpp).
#pragma once

#include <span>

#include <twocs/lowering/task_sink.hpp>

namespace twocs::lowering::detail {

/// A gate from `from` to `to` carrying `message`'s collective and group: `tasks` precede it
/// (`before`: it precedes `tasks`).
[[nodiscard]] inline TaskId add_gate(TaskSink& graph, std::span<const TaskId> tasks, bool before, DeviceId from,
                                     DeviceId to, const TaskTag& tag, Transfer message) {
  message.bytes = units::Bytes(0);
  message.peer = to;
  message.step = 0;
  message.latency_steps = 1;
  const TaskId gate = graph.add_transfer(from, tag, message);
  for (const TaskId t : tasks) {
    if (before)
      graph.add_dependency(gate, t);
    else
      graph.add_dependency(t, gate);
  }
  return gate;
}

} // namespace twocs::lowering::detail
