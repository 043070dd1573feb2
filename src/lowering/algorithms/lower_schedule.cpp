#include <cassert>

#include <twocs/lowering/collective_algorithm_lowering.hpp>

#include "schedule_builder.hpp"

namespace twocs::lowering {

LoweredSchedule add_schedule(TaskGraph& graph, const CollectiveSchedule& schedule, std::span<const DeviceId> devices,
                             Task prototype) {
  assert(devices.size() == static_cast<std::size_t>(schedule.ranks));
  LoweredSchedule out;
  out.tasks.reserve(schedule.messages.size());
  out.entries.resize(devices.size());
  prototype.kind = TaskKind::transfer;
  for (const ScheduledMessage& m : schedule.messages) {
    prototype.device = devices[static_cast<std::size_t>(m.src)];
    prototype.peer = devices[static_cast<std::size_t>(m.dst)];
    prototype.bytes = m.bytes;
    prototype.step = m.step;
    const TaskId id = graph.add_task(prototype);
    for (std::uint32_t a : m.after) graph.add_dependency(out.tasks[a], id);
    if (m.after.empty()) {
      out.entries[static_cast<std::size_t>(m.src)].push_back(id);
      out.entries[static_cast<std::size_t>(m.dst)].push_back(id);
    }
    out.tasks.push_back(id);
  }
  for (const auto& exits : detail::rank_exits(schedule)) {
    std::vector<TaskId> ids;
    for (std::uint32_t e : exits) ids.push_back(out.tasks[e]);
    out.exits.push_back(std::move(ids));
  }
  return out;
}

} // namespace twocs::lowering
