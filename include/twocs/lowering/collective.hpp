// Collectives lowered to point-to-point transfers between the participating devices.
//
// Ring algorithms (Patarasuk & Yuan, JPDC 2009; NCCL's ring): n devices in a ring, the buffer
// cut into n chunks; in each step every device sends one chunk to its successor.
//   reduce-scatter: n - 1 steps;  all-gather: n - 1 steps;  all-reduce: both, 2 (n - 1) steps.
// On an idle network with bandwidth B and latency L per hop, an all-reduce of S bytes takes
// 2 (n - 1) / n * S / B + 2 (n - 1) L. The reduction itself is fused into the transfer (NCCL's
// reduce-copy runs on data as it arrives, at HBM speed, well above link speed), so it adds no time.
//
// A collective is lowered once, by whichever participant reaches it first; every participant
// then joins with the tasks it must finish first (its data, its previous work on the stream)
// and learns which tasks complete its part.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include <twocs/lowering/collective_algorithm.hpp>
#include <twocs/lowering/task_sink.hpp>

namespace twocs::lowering {

struct CollectiveSpec {
  model::Collective kind = model::Collective::all_reduce;
  model::CommGroup group = model::CommGroup::tensor;
  model::Pass pass = model::Pass::forward;
  units::Bytes size;       // per device: all-reduce and reduce-scatter input, all-gather output
  std::uint32_t label = 0; // interned label of the transfers
  std::int32_t layer = -1;
  std::int32_t micro_batch = -1;
  Algorithm algorithm = Algorithm::ring; // anything but the ring is lowered from a schedule (collective_algorithm.hpp)
  ScheduleShape shape{};                 // its channels, chunks and ranks per node (ranks: the devices)
  std::optional<model::TokenRouting> routing; // an all-to-all as DeepEP sends it (forwarded_dispatch_schedule)
};

/// The number of ring steps and the bytes each device sends per step.
struct RingPlan {
  int steps = 0;
  units::Bytes chunk;
};
[[nodiscard]] RingPlan ring_plan(model::Collective kind, std::size_t devices, units::Bytes size);

class CollectiveInstance {
public:
  /// Lowers `spec` over `devices` (in ring order; for send_recv: sender, receiver) into `graph`,
  /// from the schedule `twocs collbench` simulates for the same group (make_schedule): NCCL's
  /// rings, one per channel with spec.shape.channels (coarse with spec.shape.coarse,
  /// collective_lowering.hpp), and every other algorithm of spec.algorithm.
  ///
  /// `only_member`: when the other members are folded away (not simulated, because they run
  /// exactly what this member runs), a ring is lowered from this member's side only: per channel
  /// its sends to its successor and its predecessor's sends to it, the latter ordered as this
  /// member's own are (by symmetry the predecessor is at the same point at the same time). On a
  /// symmetric network the member's timeline is the one of the full ring. Other algorithms (not
  /// the same seen from every rank) are lowered whole over the group instead, every folded member
  /// entering with `only_member`, which leaves after the last exit of any member
  /// (docs/network.md, "Folding").
  CollectiveInstance(TaskSink& graph, const CollectiveSpec& spec, std::vector<DeviceId> devices,
                     std::int32_t instance_id, std::optional<DeviceId> only_member = std::nullopt);

  /// `device` takes part once `entry` has finished; returns the tasks after which its part is
  /// done (its last send and its last receive). With one device there is nothing to do and the
  /// entry is returned unchanged.
  [[nodiscard]] std::vector<TaskId> join(TaskSink& graph, DeviceId device, std::span<const TaskId> entry);

  [[nodiscard]] bool all_joined() const { return joined_ == (mirrored_ ? 1 : devices_.size()); }
  [[nodiscard]] const std::vector<DeviceId>& devices() const { return devices_; }

private:
  [[nodiscard]] std::size_t position_of(DeviceId device) const;
  /// Route latencies a ring message pays: its own, plus the protocol's at the first step.
  [[nodiscard]] std::uint16_t first_step_latency(int step) const;
  /// A coarse ring message's: its steps' and the protocol's (ScheduleShape::protocol_latency_steps).
  [[nodiscard]] std::uint16_t coarse_latency_steps() const;
  [[nodiscard]] TaskId transfer(int step, std::size_t position) const;
  /// The plain ring of a ring exchange or a send_recv (one step; a send_recv has one sender).
  void lower_ring(TaskSink& graph, const TaskTag& tag, Transfer message, bool point_to_point);
  void lower_mirrored_ring(TaskSink& graph, const ScheduleShape& shape, CollectiveKind kind, const TaskTag& tag,
                           Transfer message, std::size_t member);
  void lower_mirrored_direct(TaskSink& graph, const TaskTag& tag, Transfer message, std::size_t member);
  /// The algorithm `spec` is lowered by over a group of `shape` (make_schedule's fallback applied).
  [[nodiscard]] static Algorithm schedule_algorithm_of(const CollectiveSpec& spec, const ScheduleShape& shape);
  /// The schedule `spec` is lowered from over this group (every algorithm but the plain ring).
  [[nodiscard]] CollectiveSchedule schedule_of(const CollectiveSpec& spec, const ScheduleShape& shape) const;
  void lower_mirrored_schedule(TaskSink& graph, const CollectiveSchedule& schedule, const TaskTag& tag,
                               Transfer message, std::size_t member);
  void lower_whole_folded(TaskSink& graph, const CollectiveSchedule& schedule, const TaskTag& tag, Transfer message,
                          std::size_t member);
  enum class Gate { before, after };
  /// `tasks` behind one transfer of no bytes (a gate: the engine completes it when it is ready)
  /// that precedes them all (before) or follows them all (after), when they are more than a few.
  [[nodiscard]] std::vector<TaskId> gated(TaskSink& graph, std::vector<TaskId> tasks, const TaskTag& tag,
                                          Transfer message, std::size_t member, Gate side) const;

  std::vector<DeviceId> devices_;
  int steps_ = 0;
  int protocol_steps_ = 0;        // NCCL's protocol latency beyond the messages' own, in route latencies
  std::size_t senders_ = 0;       // plain ring: transfers per step, n for a ring exchange, 1 for send_recv
  std::vector<TaskId> transfers_; // plain ring: [step * senders + position], from devices_[position] to its successor
  bool mirrored_ = false;         // folded: only one member's side (or the whole group for that member)
  std::vector<std::vector<TaskId>> schedule_entries_, schedule_exits_; // per position; every other lowering
  std::size_t joined_ = 0;
};

} // namespace twocs::lowering
