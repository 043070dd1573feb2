#include <twocs/lowering/device_program.hpp>

#include <algorithm>
#include <cassert>

#include "gate.hpp"
#include "peer_traffic.hpp"

namespace twocs::lowering {
namespace {

/// Forwards to `sink` and counts the transfers: what a collective lowered whole adds.
class CountingSink final : public TaskSink {
public:
  explicit CountingSink(TaskSink& sink) : sink_(sink) {}
  TaskId add_kernel(DeviceId device, const TaskTag& tag, const Kernel& kernel) override {
    return sink_.add_kernel(device, tag, kernel);
  }
  TaskId add_transfer(DeviceId from, const TaskTag& tag, const Transfer& transfer) override {
    ++transfers_;
    return sink_.add_transfer(from, tag, transfer);
  }
  TaskId add_host_launch(DeviceId device, const TaskTag& tag, units::Seconds duration) override {
    return sink_.add_host_launch(device, tag, duration);
  }
  void add_dependency(TaskId before, TaskId after) override { sink_.add_dependency(before, after); }
  std::uint32_t intern_label(std::string_view label) override { return sink_.intern_label(label); }
  void on_folded_collective(std::size_t devices, std::uint64_t transfers) override {
    sink_.on_folded_collective(devices, transfers);
  }
  void on_collective_flows(std::int32_t collective, std::uint32_t flows) override {
    sink_.on_collective_flows(collective, flows);
  }
  [[nodiscard]] std::uint64_t transfers() const { return transfers_; }

private:
  TaskSink& sink_;
  std::uint64_t transfers_ = 0;
};

} // namespace

std::optional<DeviceId> CollectiveRegistry::only_simulated_member(const std::vector<DeviceId>& devices) const {
  if (simulated_.empty()) return std::nullopt;
  std::vector<DeviceId> members;
  for (DeviceId d : devices)
    if (simulated_[static_cast<std::size_t>(d)]) members.push_back(d);
  assert((members.size() == 1 || members.size() == devices.size()) && "a group is either folded or simulated whole");
  if (members.size() == devices.size()) return std::nullopt;
  return members.front();
}

CollectiveRegistry::CollectiveRegistry(TaskSink& graph, std::vector<bool> simulated, CollectivePolicy policy,
                                       const RankLayout* layout)
    : graph_(graph), simulated_(std::move(simulated)), policy_(policy) {
  if (policy_.folded_peer_traffic && layout != nullptr && !simulated_.empty() && policy_.network)
    peer_traffic_ = std::make_unique<detail::PeerTraffic>(*layout, policy_.network->devices_per_node, simulated_);
}

CollectiveRegistry::~CollectiveRegistry() = default;

CollectiveRegistry::Pending CollectiveRegistry::lower(const CollectiveSpec& spec,
                                                      const std::vector<DeviceId>& devices) {
  CollectiveSpec chosen = spec;
  const auto choice = choose_collective(policy_, spec.group, kind_of(spec.kind), spec.size, devices);
  chosen.algorithm = choice.algorithm;
  chosen.shape = choice.shape;
  const std::int32_t id = next_instance_++;
  const std::optional<DeviceId> only = only_simulated_member(devices);
  const bool folded_peers =
      peer_traffic_ && peer_traffic_->leaves_node(devices) && !peer_traffic_->mirrors(spec.group, devices).empty();
  if (!folded_peers) return {std::make_unique<CollectiveInstance>(graph_, chosen, devices, id, only), {}, {}};
  // The group whole (every member's messages) and each peer group whole, under the same
  // instance (one collective in the summary, its flows shared alike).
  CountingSink counting(graph_);
  Pending pending{std::make_unique<CollectiveInstance>(counting, chosen, devices, id), {}, only};
  for (const auto& mirror : peer_traffic_->mirrors(spec.group, devices))
    pending.peers.push_back(std::make_unique<CollectiveInstance>(graph_, chosen, mirror, id));
  // Folded, the full run has the group's transfers once per group of the stage (task_count.cpp).
  if (only) graph_.on_folded_collective(devices.size(), counting.transfers());
  return pending;
}

std::vector<TaskId> CollectiveRegistry::join_with_peers(Pending& pending, const CollectiveSpec& spec, DeviceId device,
                                                        std::span<const TaskId> entry) {
  const TaskTag tag{spec.pass, spec.layer, spec.micro_batch, spec.label};
  const auto& devices = pending.instance->devices();
  const DeviceId other = devices[devices.front() == device ? devices.size() - 1 : 0];
  Transfer gate;
  gate.group = spec.group;
  const TaskId in = detail::add_gate(graph_, entry, false, device, other, tag, gate);
  const auto join_at = [&](CollectiveInstance& instance, std::size_t at, std::vector<TaskId>& into) {
    const std::vector<TaskId> exits = instance.join(graph_, instance.devices()[at], std::span(&in, 1));
    into.insert(into.end(), exits.begin(), exits.end());
  };
  std::vector<TaskId> done, peers_done;
  if (pending.only_member) {
    // Folded: the simulated member enters for every member of every group, and leaves when all
    // have (as lower_whole_folded does for one group).
    for (std::size_t at = 0; at < devices.size(); ++at) {
      join_at(*pending.instance, at, done);
      for (auto& peer : pending.peers) join_at(*peer, at, done);
    }
    return {detail::add_gate(graph_, done, false, device, other, tag, gate)};
  }
  // Every member simulated: each enters for itself and for its place in every peer group.
  const auto at = static_cast<std::size_t>(std::find(devices.begin(), devices.end(), device) - devices.begin());
  join_at(*pending.instance, at, done);
  for (auto& peer : pending.peers) join_at(*peer, at, peers_done);
  done.push_back(detail::add_gate(graph_, peers_done, false, device, other, tag, gate));
  return done;
}

std::vector<TaskId> CollectiveRegistry::join_key(const Key& key, const CollectiveSpec& spec,
                                                 const std::vector<DeviceId>& devices, DeviceId device,
                                                 std::span<const TaskId> entry) {
  auto it = pending_.find(key);
  if (it == pending_.end()) it = pending_.emplace(key, lower(spec, devices)).first;
  Pending& pending = it->second;
  assert(pending.instance->devices() == devices && "members of a group disagree on its collectives");
  std::vector<TaskId> done = pending.peers.empty() ? pending.instance->join(graph_, device, entry)
                                                   : join_with_peers(pending, spec, device, entry);
  if (pending.instance->all_joined()) pending_.erase(it);
  return done;
}

DeviceId group_tag(const std::vector<DeviceId>& devices) {
  // FNV-1a over the members (Fowler, Noll, Vo): two groups of a kind may share their first device
  // and size (the tied-embedding pair inside the pipeline group; an expert-data-parallel group
  // and a data-parallel group of the same device), so the tag names the whole membership. A
  // collision of two different groups trips the assertion in join_key.
  std::uint64_t hash = 1469598103934665603ULL;
  for (const DeviceId d : devices) hash = (hash ^ static_cast<std::uint64_t>(d)) * 1099511628211ULL;
  return static_cast<DeviceId>(hash & 0x3fffffffULL);
}

std::vector<TaskId> CollectiveRegistry::join(const CollectiveSpec& spec, const std::vector<DeviceId>& devices,
                                             std::uint32_t sequence, DeviceId device, std::span<const TaskId> entry) {
  return join_key({static_cast<int>(spec.group), devices.front(), -1 - group_tag(devices), sequence}, spec, devices,
                  device, entry);
}

std::vector<TaskId> CollectiveRegistry::join_transfer(const CollectiveSpec& spec, DeviceId from, DeviceId to,
                                                      std::uint32_t tag, DeviceId device,
                                                      std::span<const TaskId> entry) {
  return join_key({-1, from, to, tag}, spec, {from, to}, device, entry);
}

DeviceProgram::DeviceProgram(TaskSink& graph, CollectiveRegistry& registry, DeviceId device, units::Seconds launch_time)
    : graph_(graph), registry_(registry), device_(device), launch_time_(launch_time) {}

std::optional<TaskId> DeviceProgram::launch(const TaskTag& tag, double launches) {
  if (!(launch_time_.value() > 0)) return std::nullopt;
  // One launch per graph: cudaGraphLaunch costs the host about one kernel launch (an assumption,
  // docs/simulation.md, "CUDA graphs"); the graph's later work waits for it, not for launches.
  if (graph_state_ == GraphState::inside && graph_launch_) return graph_launch_;
  const TaskId id = graph_.add_host_launch(device_, tag, launch_time_ * launches);
  if (graph_state_ == GraphState::inside) graph_launch_ = id;
  if (last_launch_) graph_.add_dependency(*last_launch_, id);
  std::sort(host_waits_.begin(), host_waits_.end());
  host_waits_.erase(std::unique(host_waits_.begin(), host_waits_.end()), host_waits_.end());
  for (const TaskId t : host_waits_) graph_.add_dependency(t, id);
  host_waits_.clear();
  last_launch_ = id;
  return id;
}

TaskId DeviceProgram::compute(const TaskTag& tag, const Kernel& kernel, double host_launches) {
  const std::optional<TaskId> launched = launch(tag, host_launches);
  const TaskId id = graph_.add_kernel(device_, tag, kernel);
  if (launched) graph_.add_dependency(*launched, id);
  if (last_compute_) graph_.add_dependency(*last_compute_, id);
  // Collect the waits that fall due at this kernel; count down the overlapped ones.
  auto due = std::stable_partition(waits_.begin(), waits_.end(),
                                   [](const PendingWait& w) { return w.deferred || w.remaining > 0; });
  for (auto it = due; it != waits_.end(); ++it)
    for (TaskId t : it->tasks) graph_.add_dependency(t, id);
  waits_.erase(due, waits_.end());
  for (auto& w : waits_)
    if (!w.deferred) --w.remaining;
  last_compute_ = id;
  return id;
}

std::vector<TaskId> DeviceProgram::entry_for(Stream stream) const {
  std::vector<TaskId> entry = stream_tail_[static_cast<std::size_t>(stream)];
  if (last_compute_) entry.push_back(*last_compute_);
  return entry;
}

void DeviceProgram::add_wait(std::vector<TaskId> tasks, Stream stream, CollectiveWait wait) {
  if (tasks.empty()) return;
  waits_.push_back({std::move(tasks), stream, wait.overlapped_ops, wait.deferred});
}

void DeviceProgram::collective(const CollectiveSpec& spec, const std::vector<DeviceId>& devices, CollectiveWait wait,
                               std::span<const TaskId> also_after) {
  assert(std::find(devices.begin(), devices.end(), device_) != devices.end());
  if (devices.size() <= 1) return; // a group of one has nothing to exchange
  const Stream stream = stream_for(spec.group);
  auto& sequence = group_sequence_[{static_cast<int>(spec.group), devices.front(), group_tag(devices)}];
  auto entry = entry_for(stream);
  entry.insert(entry.end(), also_after.begin(), also_after.end());
  if (const auto launched = launch({spec.pass, spec.layer, spec.micro_batch, spec.label})) entry.push_back(*launched);
  std::vector<TaskId> done = registry_.join(spec, devices, sequence++, device_, entry);
  stream_tail_[static_cast<std::size_t>(stream)] = done;
  add_wait(std::move(done), stream, wait);
}

std::vector<TaskId> DeviceProgram::point_to_point_entry(const CollectiveSpec& spec) {
  std::vector<TaskId> entry;
  if (last_compute_) entry.push_back(*last_compute_);
  if (const auto launched = launch({spec.pass, spec.layer, spec.micro_batch, spec.label})) entry.push_back(*launched);
  return entry;
}

std::vector<TaskId> DeviceProgram::send(const CollectiveSpec& spec, DeviceId to, std::uint32_t tag, bool sender_waits) {
  std::vector<TaskId> done = registry_.join_transfer(spec, device_, to, tag, device_, point_to_point_entry(spec));
  if (sender_waits) add_wait(done, stream_for(spec.group), {});
  return done;
}

std::vector<TaskId> DeviceProgram::receive(const CollectiveSpec& spec, DeviceId from, std::uint32_t tag,
                                           bool next_waits) {
  std::vector<TaskId> done = registry_.join_transfer(spec, from, device_, tag, device_, point_to_point_entry(spec));
  if (next_waits) add_wait(done, stream_for(spec.group), {});
  return done;
}

void DeviceProgram::wait_for(std::vector<TaskId> tasks, Stream stream) { add_wait(std::move(tasks), stream, {}); }

void DeviceProgram::wait_for_stream(Stream stream) {
  for (auto& w : waits_)
    if (w.stream == stream) {
      w.deferred = false;
      w.remaining = 0;
    }
}

void DeviceProgram::synchronize_host() {
  for (auto& w : waits_) {
    w.deferred = false;
    w.remaining = 0;
    host_waits_.insert(host_waits_.end(), w.tasks.begin(), w.tasks.end());
  }
  for (std::size_t s = 0; s < stream_tail_.size(); ++s) {
    if (s == static_cast<std::size_t>(Stream::compute)) continue;
    add_wait(stream_tail_[s], static_cast<Stream>(s), {});
    host_waits_.insert(host_waits_.end(), stream_tail_[s].begin(), stream_tail_[s].end());
  }
  if (last_compute_) host_waits_.push_back(*last_compute_);
}

void DeviceProgram::host_waits_for(TaskId task) { host_waits_.push_back(task); }

void DeviceProgram::begin_graph() {
  assert(graph_state_ == GraphState::outside && "CUDA graphs do not nest");
  graph_state_ = GraphState::inside;
  graph_launch_.reset();
}

void DeviceProgram::end_graph() {
  graph_state_ = GraphState::outside;
  graph_launch_.reset();
}

void DeviceProgram::pause_graph() {
  if (graph_state_ == GraphState::inside) graph_state_ = GraphState::paused;
}

void DeviceProgram::resume_graph() {
  if (graph_state_ == GraphState::paused) graph_state_ = GraphState::inside;
}

} // namespace twocs::lowering
