// Private helpers shared by the collective algorithms: appending messages, and composing
// schedules phase after phase (hierarchical algorithms).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <twocs/lowering/collective_algorithm.hpp>

namespace twocs::lowering::detail {

using MessageIds = std::vector<std::uint32_t>;

/// Appends one message and returns its index.
std::uint32_t add_message(CollectiveSchedule& schedule, std::int32_t src, std::int32_t dst, units::Bytes bytes,
                          std::int32_t step, MessageIds after);

/// Per rank of `schedule`, the messages after which its part is done: those of its messages (from
/// message `first` on) that no later message of the same rank waits for, or the schedule's
/// common exit.
[[nodiscard]] std::vector<MessageIds> rank_exits(const CollectiveSchedule& schedule, std::size_t first = 0);

/// Appends `phase` (over phase.ranks ranks) to `out`, phase rank j being out rank `ranks[j]`.
/// A message of `phase` with no predecessor waits for `gate` of its two ranks (their previous
/// phase's exits); steps continue from `step_offset`.
void append_phase(CollectiveSchedule& out, const CollectiveSchedule& phase, std::span<const std::int32_t> ranks,
                  const std::vector<MessageIds>& gate, std::int32_t step_offset);

// The algorithms (each file of this folder); `make_schedule` dispatches and falls back.
CollectiveSchedule ring_schedule(CollectiveKind kind, units::Bytes size, const ScheduleShape& shape);
CollectiveSchedule tree_schedule(units::Bytes size, const ScheduleShape& shape);
CollectiveSchedule halving_doubling_schedule(CollectiveKind kind, units::Bytes size, const ScheduleShape& shape);
CollectiveSchedule hierarchical_schedule(CollectiveKind kind, units::Bytes size, const ScheduleShape& shape);
CollectiveSchedule in_network_schedule(units::Bytes size, const ScheduleShape& shape);
CollectiveSchedule in_network_tree_schedule(units::Bytes size, const ScheduleShape& shape);
CollectiveSchedule direct_schedule(Algorithm algorithm, CollectiveKind kind, units::Bytes size,
                                   const ScheduleShape& shape);

/// Slices per channel for `bytes` of one channel (ScheduleShape::slice_bytes).
[[nodiscard]] int pipeline_slices(const ScheduleShape& shape, units::Bytes bytes);

[[nodiscard]] inline bool is_power_of_two(std::int32_t n) { return n > 0 && (n & (n - 1)) == 0; }

} // namespace twocs::lowering::detail
