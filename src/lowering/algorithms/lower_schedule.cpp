#include <cassert>

#include <twocs/lowering/collective_algorithm_lowering.hpp>

#include "schedule_builder.hpp"

namespace twocs::lowering {

LoweredSchedule add_schedule(TaskSink& sink, const CollectiveSchedule& schedule, std::span<const DeviceId> devices,
                             const TaskTag& tag, Transfer prototype) {
  assert(devices.size() == static_cast<std::size_t>(schedule.ranks));
  LoweredSchedule out;
  out.tasks.reserve(schedule.messages.size());
  out.entries.resize(devices.size());
  for (const ScheduledMessage& m : schedule.messages) {
    prototype.peer = devices[static_cast<std::size_t>(m.dst)];
    prototype.bytes = m.bytes;
    prototype.step = m.step;
    assert(m.latency_steps >= 1 && m.latency_steps <= 0xFFFF);
    prototype.latency_steps = static_cast<std::uint16_t>(m.latency_steps);
    const TaskId id = sink.add_transfer(devices[static_cast<std::size_t>(m.src)], tag, prototype);
    for (std::uint32_t a : m.after) sink.add_dependency(out.tasks[a], id);
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
