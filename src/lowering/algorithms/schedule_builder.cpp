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
  constexpr auto none = static_cast<std::uint32_t>(-1);
  const auto n = static_cast<std::size_t>(schedule.ranks);
  std::vector<std::uint32_t> last_send(n, none), last_receive(n, none);
  for (std::size_t i = first; i < schedule.messages.size(); ++i) {
    last_send[static_cast<std::size_t>(schedule.messages[i].src)] = static_cast<std::uint32_t>(i);
    last_receive[static_cast<std::size_t>(schedule.messages[i].dst)] = static_cast<std::uint32_t>(i);
  }
  std::vector<MessageIds> exits(n);
  for (std::size_t r = 0; r < n; ++r) {
    if (last_send[r] != none) exits[r].push_back(last_send[r]);
    if (last_receive[r] != none && last_receive[r] != last_send[r]) exits[r].push_back(last_receive[r]);
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
