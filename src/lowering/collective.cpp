#include <twocs/lowering/collective.hpp>

#include <algorithm>
#include <cassert>
#include <vector>

#include <twocs/lowering/collective_algorithm_lowering.hpp>
#include <twocs/lowering/collective_lowering.hpp>

#include "gate.hpp"

namespace twocs::lowering {
namespace {

/// The most messages one rank of `schedule` starts at once: those that wait for no other.
std::uint32_t concurrent_flows(const CollectiveSchedule& schedule) {
  std::vector<std::uint32_t> roots(static_cast<std::size_t>(schedule.ranks), 0);
  for (const ScheduledMessage& m : schedule.messages)
    if (m.after.empty() && m.bytes.value() > 0) ++roots[static_cast<std::size_t>(m.src)];
  return roots.empty() ? 1 : std::max<std::uint32_t>(1, *std::max_element(roots.begin(), roots.end()));
}

} // namespace

RingPlan ring_plan(model::Collective kind, std::size_t devices, units::Bytes size) {
  if (devices <= 1) return {0, units::Bytes(0)};
  const int n = static_cast<int>(devices);
  switch (kind) {
  case model::Collective::all_reduce: return {2 * (n - 1), size / static_cast<double>(n)};
  case model::Collective::reduce_scatter:
  case model::Collective::all_gather: return {n - 1, size / static_cast<double>(n)};
  case model::Collective::send_recv: return {1, size};
  // Pairwise exchange: n - 1 rounds, each sending the 1/n of the buffer meant for one peer.
  case model::Collective::all_to_all: return {n - 1, size / static_cast<double>(n)};
  // Every member hands its whole buffer to its successor at once.
  case model::Collective::ring_exchange: return {1, size};
  }
  return {0, units::Bytes(0)};
}

CollectiveInstance::CollectiveInstance(TaskSink& graph, const CollectiveSpec& spec, std::vector<DeviceId> devices,
                                       std::int32_t instance_id, std::optional<DeviceId> only_member)
    : devices_(std::move(devices)) {
  assert(spec.kind != model::Collective::send_recv || devices_.size() == 2);
  const RingPlan plan = ring_plan(spec.kind, devices_.size(), spec.size);
  steps_ = plan.steps;
  const TaskTag tag{spec.pass, spec.layer, spec.micro_batch, spec.label};
  Transfer message;
  // NCCL's protocol (collective_protocol.hpp): its wire bytes; its latency is waited at the start.
  message.bytes = plan.chunk / spec.shape.protocol_bandwidth_fraction;
  protocol_steps_ = spec.kind == model::Collective::ring_exchange || spec.kind == model::Collective::send_recv
                        ? 0
                        : spec.shape.protocol_latency_steps;
  message.collective = instance_id;
  message.group = spec.group;
  // An all-to-all is always the direct pairwise exchange (NCCL's alltoall: one send and
  // receive per peer); folded, the mirrored ring carries the same bytes per member.
  const bool all_to_all = spec.kind == model::Collective::all_to_all;
  // A ring exchange is one ring step whatever algorithm the group's collectives use.
  const bool ring_exchange = spec.kind == model::Collective::ring_exchange;
  // DeepEP's dispatch: every rank sends and receives the same messages (its node's ranks, and
  // the ranks of its local index in the other nodes), so folded, the simulated member's side
  // stands for every member's, as for the direct all-to-all.
  const bool forwarded = all_to_all && spec.routing.has_value();
  ScheduleShape shape = spec.shape;
  shape.ranks = static_cast<std::int32_t>(devices_.size());
  const Algorithm runs = schedule_algorithm_of(spec, shape);
  message.algorithm = runs;
  // Reduction and gather rings are NCCL's: one ring per channel (one per NIC the group's node
  // members use), the same schedule `twocs collbench` simulates (ring_order). Folded, the
  // simulated member's side of every channel's ring.
  const bool nccl_ring = runs == Algorithm::ring && !ring_exchange && steps_ > 0 &&
                         spec.kind != model::Collective::send_recv && !all_to_all;
  if ((nccl_ring || ring_exchange) && only_member && steps_ > 0) {
    // A ring exchange is one step of the plain ring whatever the group's collectives use.
    const ScheduleShape flat{.ranks = shape.ranks};
    lower_mirrored_ring(graph, ring_exchange ? flat : shape, kind_of(spec.kind), tag, message,
                        position_of(*only_member));
    return;
  }
  const bool scheduled = steps_ > 0 && (runs != Algorithm::ring || nccl_ring || all_to_all);
  const std::optional<CollectiveSchedule> schedule =
      scheduled && !(all_to_all && !forwarded && only_member) ? std::optional(schedule_of(spec, shape)) : std::nullopt;
  if (schedule) graph.on_collective_flows(instance_id, concurrent_flows(*schedule));
  if (schedule && !only_member) {
    auto lowered = add_schedule(graph, *schedule, devices_, tag, message);
    schedule_entries_ = std::move(lowered.entries);
    schedule_exits_ = std::move(lowered.exits);
  } else if (schedule && forwarded) {
    lower_mirrored_schedule(graph, *schedule, tag, message, position_of(*only_member));
    graph.on_folded_collective(devices_.size(), schedule->messages.size());
  } else if (schedule) {
    lower_whole_folded(graph, *schedule, tag, message, position_of(*only_member));
  } else if (only_member && all_to_all) {
    lower_mirrored_direct(graph, tag, message, position_of(*only_member));
    // Unfolded, every member sends to every other.
    graph.on_folded_collective(devices_.size(), static_cast<std::uint64_t>(steps_) * devices_.size());
  } else if (steps_ > 0) {
    assert(!only_member && "point-to-point messages connect simulated devices");
    lower_ring(graph, tag, message, spec.kind == model::Collective::send_recv);
  }
}

Algorithm CollectiveInstance::schedule_algorithm_of(const CollectiveSpec& spec, const ScheduleShape& shape) {
  if (spec.kind == model::Collective::ring_exchange || spec.kind == model::Collective::send_recv)
    return Algorithm::ring;
  if (spec.kind == model::Collective::all_to_all) return Algorithm::direct;
  return scheduled_algorithm(spec.algorithm, kind_of(spec.kind), shape);
}

CollectiveSchedule CollectiveInstance::schedule_of(const CollectiveSpec& spec, const ScheduleShape& shape) const {
  const bool all_to_all = spec.kind == model::Collective::all_to_all;
  if (all_to_all && spec.routing) return forwarded_dispatch_schedule(*spec.routing, shape);
  return make_schedule(all_to_all ? Algorithm::direct : spec.algorithm, kind_of(spec.kind), spec.size, shape);
}

void CollectiveInstance::lower_mirrored_ring(TaskSink& graph, const ScheduleShape& shape, CollectiveKind kind,
                                             const TaskTag& tag, Transfer message, std::size_t member) {
  // The simulated member's side of every channel's ring (ring_order): its sends to its successor
  // in that channel and its predecessor's sends to it, the latter ordered as its own are (by
  // symmetry the predecessor is at the same point at the same time). With the channels rotated
  // over the node, the member leaves its node in one channel and enters it in another, so its
  // links carry what they carry in the full ring.
  assert(shape.chunks == 1 && "run lowers rings without extra pipeline slices");
  const auto n = static_cast<std::int32_t>(devices_.size());
  const bool coarse = shape.coarse && coarse_possible(kind, Algorithm::ring, n);
  const int channels = shape.channels;
  message.bytes = message.bytes / static_cast<double>(channels);
  mirrored_ = true;
  schedule_entries_.assign(devices_.size(), {});
  schedule_exits_.assign(devices_.size(), {});
  auto& entries = schedule_entries_[member];
  auto& exits = schedule_exits_[member];
  for (int c = 0; c < channels; ++c) {
    const auto order = ring_order(shape, c);
    const auto at = static_cast<std::int32_t>(std::find(order.begin(), order.end(), member) - order.begin());
    const auto successor = static_cast<std::size_t>(order[static_cast<std::size_t>((at + 1) % n)]);
    const auto predecessor = static_cast<std::size_t>(order[static_cast<std::size_t>((at + n - 1) % n)]);
    Transfer m = message;
    if (coarse) { // one stream each way for all the steps (collective_lowering.hpp)
      m.bytes = m.bytes * static_cast<double>(steps_);
      m.step = steps_ - 1;
      m.latency_steps = coarse_latency_steps();
    }
    TaskId send = 0, receive = 0;
    for (int step = 0; step < (coarse ? 1 : steps_); ++step) {
      if (!coarse) {
        m.step = step;
        m.latency_steps = first_step_latency(step);
      }
      m.peer = devices_[successor];
      const TaskId next_send = graph.add_transfer(devices_[member], tag, m);
      m.peer = devices_[member];
      const TaskId next_receive = graph.add_transfer(devices_[predecessor], tag, m);
      if (step == 0) {
        entries.insert(entries.end(), {next_send, next_receive});
      } else { // each forwards what it received in the previous step, after its own previous send
        for (TaskId next : {next_send, next_receive})
          for (TaskId before : {send, receive}) graph.add_dependency(before, next);
      }
      send = next_send;
      receive = next_receive;
    }
    exits.insert(exits.end(), {send, receive});
  }
  // Unfolded, every member sends once per step and channel (coarse: once per channel, and the end).
  graph.on_folded_collective(devices_.size(), coarse ? static_cast<std::uint64_t>(channels) * devices_.size() + 1
                                                     : static_cast<std::uint64_t>(steps_) * channels * devices_.size());
  // Each member sends once per channel at a time, as in the unfolded ring's schedule.
  graph.on_collective_flows(message.collective, static_cast<std::uint32_t>(channels));
}

void CollectiveInstance::lower_whole_folded(TaskSink& graph, const CollectiveSchedule& schedule, const TaskTag& tag,
                                            Transfer message, std::size_t member) {
  // Trees, halving-doubling, hierarchical and in-network schedules are not the same seen from
  // every rank, so no single member's side stands for the others. Folded, the whole schedule is
  // lowered over the group; every folded member enters it when the simulated member does (it
  // runs the same program, so it reaches the collective at the same time). The simulated member
  // stands for all of them, so its part is done when every member's is (the members' exits
  // differ: a tree's root finishes after its leaves). The links carry the group's traffic as in
  // the full run.
  const auto lowered = add_schedule(graph, schedule, devices_, tag, message);
  mirrored_ = true;
  schedule_entries_.assign(devices_.size(), {});
  schedule_exits_.assign(devices_.size(), {});
  std::vector<TaskId> firsts, lasts;
  for (std::size_t i = 0; i < schedule.messages.size(); ++i)
    if (schedule.messages[i].after.empty()) firsts.push_back(lowered.tasks[i]);
  for (const auto& exits : lowered.exits) lasts.insert(lasts.end(), exits.begin(), exits.end());
  // The member enters at every first message of the group and leaves after every last one. The
  // next collective on its stream would wait with each of its first messages for each of these
  // last ones: (first x last) dependencies, d^2 over a wide group. A gate of no bytes, which the
  // engine completes the moment it is ready, joins them with first + last instead; the times are
  // the same.
  schedule_entries_[member] = gated(graph, std::move(firsts), tag, message, member, Gate::before);
  schedule_exits_[member] = gated(graph, std::move(lasts), tag, message, member, Gate::after);
  graph.on_folded_collective(devices_.size(), schedule.messages.size());
}

std::vector<TaskId> CollectiveInstance::gated(TaskSink& graph, std::vector<TaskId> tasks, const TaskTag& tag,
                                              Transfer message, std::size_t member, Gate side) const {
  constexpr std::size_t ungated = 8; // small groups keep their direct dependencies
  if (tasks.size() <= ungated) return tasks;
  return {detail::add_gate(graph, tasks, side == Gate::before, devices_[member],
                           devices_[(member + 1) % devices_.size()], tag, message)};
}

void CollectiveInstance::lower_ring(TaskSink& graph, const TaskTag& tag, Transfer message, bool point_to_point) {
  const std::size_t n = devices_.size();
  // A send_recv has one transfer, from the first device to the second; a ring has n per step.
  senders_ = point_to_point ? 1 : n;
  transfers_.reserve(static_cast<std::size_t>(steps_) * senders_);
  for (int step = 0; step < steps_; ++step) {
    for (std::size_t i = 0; i < senders_; ++i) {
      message.step = step;
      message.peer = devices_[(i + 1) % n];
      message.latency_steps = first_step_latency(step);
      const TaskId id = graph.add_transfer(devices_[i], tag, message);
      transfers_.push_back(id);
      if (step == 0) continue;
      // The chunk device i forwards arrived in the previous step from its predecessor, and
      // device i sends one chunk at a time.
      graph.add_dependency(transfer(step - 1, (i + n - 1) % n), id);
      graph.add_dependency(transfer(step - 1, i), id);
    }
  }
}

void CollectiveInstance::lower_mirrored_direct(TaskSink& graph, const TaskTag& tag, Transfer message,
                                               std::size_t member) {
  // The simulated member's side of a direct all-to-all: it sends 1/n to every peer and every
  // peer sends 1/n to it, all at once, as the unfolded direct schedule does for each member.
  const std::size_t n = devices_.size();
  mirrored_ = true;
  senders_ = 2;
  schedule_entries_.assign(n, {});
  schedule_exits_.assign(n, {});
  for (std::size_t k = 1; k < n; ++k) {
    message.step = static_cast<std::int32_t>(k - 1);
    message.peer = devices_[(member + k) % n];
    const TaskId send = graph.add_transfer(devices_[member], tag, message);
    message.peer = devices_[member];
    const TaskId receive = graph.add_transfer(devices_[(member + n - k) % n], tag, message);
    for (TaskId id : {send, receive}) {
      transfers_.push_back(id);
      schedule_entries_[member].push_back(id);
      schedule_exits_[member].push_back(id);
    }
  }
  // Every member sends to every other at once, as the unfolded direct schedule does.
  graph.on_collective_flows(message.collective, static_cast<std::uint32_t>(n - 1));
}

void CollectiveInstance::lower_mirrored_schedule(TaskSink& graph, const CollectiveSchedule& schedule,
                                                 const TaskTag& tag, Transfer message, std::size_t member) {
  // The simulated member's messages of a schedule whose messages all start at once and that
  // every member sees alike: those it sends and those sent to it.
  mirrored_ = true;
  schedule_entries_.assign(devices_.size(), {});
  schedule_exits_.assign(devices_.size(), {});
  const auto at = static_cast<std::int32_t>(member);
  for (const ScheduledMessage& m : schedule.messages) {
    assert(m.after.empty() && "only schedules whose messages start together mirror");
    if (m.src != at && m.dst != at) continue;
    message.step = m.step;
    message.bytes = m.bytes;
    message.peer = devices_[static_cast<std::size_t>(m.dst)];
    const TaskId id = graph.add_transfer(devices_[static_cast<std::size_t>(m.src)], tag, message);
    transfers_.push_back(id);
    schedule_entries_[member].push_back(id);
    schedule_exits_[member].push_back(id);
  }
}

std::uint16_t CollectiveInstance::first_step_latency(int step) const {
  return static_cast<std::uint16_t>(step == 0 ? std::min(1 + protocol_steps_, 0xFFFF) : 1);
}

std::uint16_t CollectiveInstance::coarse_latency_steps() const {
  return static_cast<std::uint16_t>(std::min(steps_ + protocol_steps_, 0xFFFF));
}

std::size_t CollectiveInstance::position_of(DeviceId device) const {
  const auto it = std::find(devices_.begin(), devices_.end(), device);
  assert(it != devices_.end() && "device does not take part in this collective");
  return static_cast<std::size_t>(it - devices_.begin());
}

TaskId CollectiveInstance::transfer(int step, std::size_t position) const {
  return transfers_[static_cast<std::size_t>(step) * senders_ + position];
}

std::vector<TaskId> CollectiveInstance::join(TaskSink& graph, DeviceId device, std::span<const TaskId> entry) {
  ++joined_;
  assert(joined_ <= devices_.size());
  if (steps_ == 0) return {entry.begin(), entry.end()};
  const std::size_t n = devices_.size();
  const std::size_t i = position_of(device);
  if (!schedule_exits_.empty()) {
    for (TaskId e : entry)
      for (TaskId first : schedule_entries_[i]) graph.add_dependency(e, first);
    return schedule_exits_[i];
  }
  if (senders_ == 1) { // send_recv: the transfer waits for both ends (a blocking, matched send and receive)
    for (TaskId e : entry) graph.add_dependency(e, transfers_[0]);
    return {transfers_[0]};
  }
  // Device i sends in step 0 and receives from its predecessor in step 0: both wait for it.
  const std::size_t predecessor = (i + n - 1) % n;
  for (TaskId e : entry) {
    graph.add_dependency(e, transfer(0, i));
    graph.add_dependency(e, transfer(0, predecessor));
  }
  return {transfer(steps_ - 1, i), transfer(steps_ - 1, predecessor)};
}

} // namespace twocs::lowering
