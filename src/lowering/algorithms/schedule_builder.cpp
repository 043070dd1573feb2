#include "schedule_builder.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace twocs::lowering::detail {

std::uint32_t add_message(CollectiveSchedule& schedule, std::int32_t src, std::int32_t dst, units::Bytes bytes,
                          std::int32_t step, MessageIds after) {
  assert(src != dst && src >= 0 && dst >= 0 && src < schedule.ranks && dst < schedule.ranks);
  const auto id = static_cast<std::uint32_t>(schedule.messages.size());
  schedule.messages.push_back({src, dst, bytes, step, std::move(after)});
  return id;
}

int pipeline_slices(const ScheduleShape& shape, units::Bytes bytes) {
  if (shape.chunks > 1 || shape.slice_bytes <= 0) return shape.chunks;
  constexpr double most = 64;
  return static_cast<int>(std::clamp(std::ceil(bytes.value() / shape.slice_bytes), 1.0, most));
}

std::vector<MessageIds> rank_exits(const CollectiveSchedule& schedule, std::size_t first) {
  const auto n = static_cast<std::size_t>(schedule.ranks);
  std::vector<MessageIds> exits(n);
  if (schedule.common_exit && *schedule.common_exit >= first) {
    for (auto& e : exits) e.push_back(*schedule.common_exit);
    return exits;
  }
  // A rank is done once every message it sends or receives is: its exits are those of its
  // messages that no later message of the same rank waits for (per channel of a ring, its last
  // send and its last receive; channels need not finish in the order they were built).
  const std::size_t count = schedule.messages.size();
  std::vector<std::uint8_t> followed(count, 0); // bit 0: for its sender, bit 1: for its receiver
  for (std::size_t i = first; i < count; ++i) {
    const ScheduledMessage& m = schedule.messages[i];
    for (std::uint32_t a : m.after) {
      if (a < first) continue;
      const ScheduledMessage& before = schedule.messages[a];
      for (std::int32_t r : {m.src, m.dst}) {
        if (r == before.src) followed[a] |= 1;
        if (r == before.dst) followed[a] |= 2;
      }
    }
  }
  for (std::size_t i = first; i < count; ++i) {
    const ScheduledMessage& m = schedule.messages[i];
    if ((followed[i] & 1) == 0) exits[static_cast<std::size_t>(m.src)].push_back(static_cast<std::uint32_t>(i));
    if ((followed[i] & 2) == 0) exits[static_cast<std::size_t>(m.dst)].push_back(static_cast<std::uint32_t>(i));
  }
  return exits;
}

void append_phase(CollectiveSchedule& out, const CollectiveSchedule& phase, std::span<const std::int32_t> ranks,
                  const std::vector<MessageIds>& gate, std::int32_t step_offset) {
  assert(ranks.size() == static_cast<std::size_t>(phase.ranks));
  const auto base = static_cast<std::uint32_t>(out.messages.size());
  for (const ScheduledMessage& m : phase.messages) {
    const std::int32_t src = ranks[static_cast<std::size_t>(m.src)];
    const std::int32_t dst = ranks[static_cast<std::size_t>(m.dst)];
    MessageIds after;
    for (std::uint32_t a : m.after) after.push_back(base + a);
    if (m.after.empty()) {
      for (std::int32_t r : {src, dst})
        for (std::uint32_t g : gate[static_cast<std::size_t>(r)]) after.push_back(g);
    }
    add_message(out, src, dst, m.bytes, step_offset + m.step, std::move(after));
  }
}

} // namespace twocs::lowering::detail
