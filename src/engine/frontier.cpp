#include "frontier.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <deque>
#include <functional>
#include <unordered_map>

#include <fmt/format.h>
#include <simgrid/kernel/Timer.hpp>
#include <simgrid/kernel/resource/Action.hpp>
#include <simgrid/s4u/Activity.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>

#include "comm_interference.hpp"
#include "device_compute.hpp"
#include "network_actions.hpp"
#include "platform_builder.hpp"

namespace twocs::engine::detail {
namespace {

namespace sg = simgrid::s4u;
using lowering::TaskId;

/// The first device the graph uses (hosts of unused devices are null).
const sg::Host* first_host(const std::vector<sg::Host*>& hosts) {
  for (const sg::Host* h : hosts)
    if (h != nullptr) return h;
  return nullptr;
}

/// Payload of a transfer in whole bytes, as SimGrid counts them.
/// SimGrid moves whole bytes. A message of a fraction of a byte (a tiny collective cut into many
/// pieces) still moves one and pays its latency; only a message of no bytes at all (a coarse ring's
/// end, a zero-byte join) costs nothing.
std::uint64_t payload_bytes(const lowering::Transfer& transfer) {
  assert(transfer.bytes.value() >= 0 && std::isfinite(transfer.bytes.value()));
  if (transfer.bytes.value() <= 0) return 0;
  return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(transfer.bytes.value())));
}

bool costs_nothing(const lowering::TaskGraph& graph, TaskId id) {
  if (graph.task(id).is_transfer()) return payload_bytes(graph.transfer(id)) == 0;
  const units::Seconds duration = graph.kernel(id).duration;
  assert(duration.value() >= 0 && std::isfinite(duration.value()));
  return duration.value() <= 0;
}

class Frontier final : public SimulationListener {
public:
  Frontier(const lowering::TaskGraph& graph, const std::vector<sg::Host*>& hosts, EngineSession& session,
           const hardware::CommInterference& interference, std::vector<double> slowdowns, const EngineOptions& options)
      : graph_(graph), slowdowns_(std::move(slowdowns)), on_progress_(options.on_progress),
        progress_every_(std::max<std::uint64_t>(options.progress_every, 1)), hosts_(hosts), session_(session),
        compute_(hosts, host_speed,
                 [this](TaskId id, double start, double end) { on_kernel_finished(id, start, end); }),
        interference_(hosts.size(), interference,
                      [this](lowering::DeviceId device, bool on) { compute_.set_interfered(device, on); }),
        network_(first_host(hosts)), waiting_on_(graph.size()), timings_(graph.size()), done_(graph.size(), false) {
    // Counted from the successor rows: the graph builds its predecessor rows only for analysis.
    for (TaskId id = 0; id < graph.size(); ++id)
      for (TaskId next : graph.successors(id)) ++waiting_on_[next];
    // Only s4u comms carry a pointer to their task id (4 bytes a task that network actions do not need).
    if (!network_.available()) {
      ids_.resize(graph.size());
      for (TaskId id = 0; id < graph.size(); ++id) ids_[id] = id;
    }
  }

  ~Frontier() {
    for (auto& [id, waiting] : delayed_)
      if (waiting.timer != nullptr) waiting.timer->remove();
    session_.detach();
  }

  Timeline run(EngineStats* stats) {
    session_.attach(*this);
    // Sources in id order, so identical inputs start identical activities in identical order.
    for (TaskId id = 0; id < graph_.size(); ++id)
      if (waiting_on_[id] == 0) make_ready(id);
    complete_inline_tasks();
    session_.run();
    session_.detach();
    completed_.clear();
    if (stats != nullptr) *stats = {activities_, peak_live_};
    check_all_finished();
    return timeline();
  }

  void on_activity_completed(const sg::Activity& activity) override {
    const auto* slot = activity.get_data<const TaskId>();
    if (!owns(slot)) return; // an activity of no simulation of ours
    const TaskId id = *slot;
    assert(activity.get_state() == sg::Activity::State::FINISHED);
    const auto it = comms_.find(id);
    assert(it != comms_.end());
    // Releasing the last reference inside the activity's own completion callback crashes 3.32:
    // keep it until the clock moves on.
    completed_.push_back(std::move(it->second));
    comms_.erase(it);
    transfer_finished(id, activity.get_start_time(), activity.get_finish_time());
  }

  void on_time_advanced() override {
    completed_.clear();
    // Network actions the model just finished, in its order (network_actions.hpp).
    while (simgrid::kernel::resource::Action* action = network_.next_finished()) {
      const auto it = actions_.find(action);
      assert(it != actions_.end());
      const TaskId id = it->second;
      actions_.erase(it);
      const double start = action->get_start_time(), end = action->get_finish_time();
      NetworkActions::release(action);
      transfer_finished(id, start, end);
    }
  }

  void transfer_finished(TaskId id, double start, double end) {
    if (const auto it = delayed_.find(id); it != delayed_.end()) { // it started paying its latencies earlier
      start = it->second.ready;
      delayed_.erase(it);
    }
    finish(id, {session_.since_start(start), session_.since_start(end)});
    interference_.transfer_finished(graph_.task(id).device, graph_.transfer(id).peer);
    --live_count_;
    release_successors(id);
    complete_inline_tasks();
  }

  void on_kernel_finished(TaskId id, double start, double end) {
    finish(id, {session_.since_start(start), session_.since_start(end)});
    --live_count_;
    release_successors(id);
    complete_inline_tasks();
  }

private:
  [[nodiscard]] bool owns(const TaskId* slot) const {
    return slot != nullptr && std::less_equal<>()(ids_.data(), slot) && std::less<>()(slot, ids_.data() + ids_.size());
  }

  /// A kernel's work on its device: the part that runs at the SM clock stretched by the device's
  /// slowdown (speed variation; memory-bound time and overheads keep theirs).
  [[nodiscard]] double kernel_work(lowering::DeviceId device, const lowering::Kernel& kernel) const {
    const double slowdown = slowdowns_.empty() ? 1.0 : slowdowns_[static_cast<std::size_t>(device)];
    return kernel.duration.value() * (1.0 + (slowdown - 1.0) * kernel.clock_share);
  }

  void make_ready(TaskId id) {
    const lowering::Task& task = graph_.task(id);
    if (costs_nothing(graph_, id)) {
      inline_ready_.push_back(id);
      return;
    }
    ++activities_;
    peak_live_ = std::max(peak_live_, ++live_count_);
    if (task.is_host()) {
      start_host_launch(id);
      return;
    }
    if (!task.is_transfer()) {
      compute_.start(task.device, id, kernel_work(task.device, graph_.kernel(id)));
      return;
    }
    const lowering::Transfer& transfer = graph_.transfer(id);
    interference_.transfer_started(task.device, transfer.peer);
    // Network actions pay no latency in SimGrid (network_actions.cpp): the engine waits it out
    // here, during which the link carries nothing. A coarse collective's transfer
    // (lowering/collective_lowering.hpp) pays the latencies of all the steps it stands for.
    // Every transfer pays at least one latency, as SimGrid's own comms do.
    const int steps = std::max<int>(transfer.latency_steps, 1);
    const int paid_by_simgrid = network_.available() ? 0 : 1;
    if (steps > paid_by_simgrid && route_latency(task.device, transfer.peer) > 0) {
      const double now = sg::Engine::get_clock();
      const double wait = (steps - paid_by_simgrid) * route_latency(task.device, transfer.peer);
      Delayed& waiting = delayed_[id];
      waiting.ready = now;
      waiting.timer = simgrid::kernel::timer::Timer::set(now + wait, [this, id] {
        delayed_[id].timer = nullptr; // SimGrid deletes a timer after running it
        start_transfer(id);
      });
      return;
    }
    start_transfer(id);
  }

  /// A host launch takes its duration of the host's time and nothing of the device's.
  void start_host_launch(TaskId id) {
    const double now = sg::Engine::get_clock();
    Delayed& launching = delayed_[id];
    launching.ready = now;
    launching.timer = simgrid::kernel::timer::Timer::set(now + graph_.kernel(id).duration.value(), [this, id] {
      const auto it = delayed_.find(id); // SimGrid deletes a timer after running it
      const double start = it->second.ready;
      delayed_.erase(it);
      on_kernel_finished(id, start, sg::Engine::get_clock());
    });
  }

  void start_transfer(TaskId id) {
    const lowering::Task& task = graph_.task(id);
    const lowering::Transfer& transfer = graph_.transfer(id);
    if (network_.available()) {
      auto* action = network_.start(host(task.device), host(transfer.peer), payload_bytes(transfer));
      NetworkActions::share_as(action, graph_.collective_flows(transfer.collective));
      actions_.emplace(action, id);
      return;
    }
    sg::ActivityPtr activity =
        sg::Comm::sendto_init(host(task.device), host(transfer.peer))->set_payload_size(payload_bytes(transfer));
    activity->set_data(&ids_[id]);
    activity->start();
    comms_.emplace(id, std::move(activity));
  }

  /// The latency of one message from `from` to `to`: the sum over its route's links.
  double route_latency(lowering::DeviceId from, lowering::DeviceId to) {
    const auto key =
        (static_cast<std::uint64_t>(static_cast<std::uint32_t>(from)) << 32) | static_cast<std::uint32_t>(to);
    const auto [it, added] = route_latency_.try_emplace(key, 0.0);
    if (added) {
      std::vector<sg::Link*> links;
      host(from)->route_to(host(to), links, &it->second);
    }
    return it->second;
  }

  [[nodiscard]] sg::Host* host(lowering::DeviceId device) const {
    assert(device >= 0 && static_cast<std::size_t>(device) < hosts_.size());
    return hosts_[static_cast<std::size_t>(device)];
  }

  /// Tasks that cost nothing start and finish now, in the order they became ready.
  void complete_inline_tasks() {
    while (!inline_ready_.empty()) {
      const TaskId id = inline_ready_.front();
      inline_ready_.pop_front();
      const units::Seconds now = session_.now();
      finish(id, {now, now});
      release_successors(id);
    }
  }

  void finish(TaskId id, TaskTiming timing) {
    assert(!done_[id]);
    done_[id] = true;
    timings_[id] = timing;
    if (++finished_ % progress_every_ == 0 && on_progress_) on_progress_({finished_, graph_.size()});
  }

  /// Successors in the order their dependencies were added, for determinism.
  void release_successors(TaskId id) {
    graph_.for_each_successor(id, [this](TaskId next) {
      assert(waiting_on_[next] > 0);
      if (--waiting_on_[next] == 0) make_ready(next);
    });
  }

  void check_all_finished() const {
    if (finished_ == graph_.size()) return;
    const auto first = static_cast<TaskId>(std::find(done_.begin(), done_.end(), false) - done_.begin());
    throw SimulationError(fmt::format("{} of {} tasks never ran (a dependency cycle, or a task waiting on one); "
                                      "the first is task {} \"{}\"",
                                      graph_.size() - finished_, graph_.size(), first, graph_.display_name(first)));
  }

  [[nodiscard]] Timeline timeline() {
    Timeline result;
    for (const TaskTiming& t : timings_) result.makespan = units::max(result.makespan, t.finish);
    result.tasks = std::move(timings_);
    return result;
  }

  const lowering::TaskGraph& graph_;
  std::vector<double> slowdowns_; // per device (device_slowdowns)
  const ProgressCallback& on_progress_;
  std::uint64_t progress_every_;
  const std::vector<sg::Host*>& hosts_;
  EngineSession& session_;
  DeviceCompute compute_;
  CommInterference interference_;
  NetworkActions network_;
  std::unordered_map<const simgrid::kernel::resource::Action*, TaskId> actions_; // transfers in flight
  std::vector<std::uint32_t> waiting_on_;                                        // unfinished predecessors per task
  std::vector<TaskId> ids_;                           // s4u comms only: ids_[i] == i, each comm's data
  std::unordered_map<TaskId, sg::ActivityPtr> comms_; // without network actions: s4u comms in flight
  std::vector<sg::ActivityPtr> completed_;            // finished comms, released when the clock moves
  std::deque<TaskId> inline_ready_;
  struct Delayed {
    double ready = 0;                               // SimGrid date it became ready
    simgrid::kernel::timer::Timer* timer = nullptr; // until it fires
  };
  std::unordered_map<TaskId, Delayed> delayed_;             // coarse transfers paying their latencies, host launches
  std::unordered_map<std::uint64_t, double> route_latency_; // per (sender, receiver)
  std::vector<TaskTiming> timings_;
  std::vector<bool> done_;
  std::uint64_t finished_ = 0;
  std::uint64_t activities_ = 0;
  std::uint64_t live_count_ = 0;
  std::uint64_t peak_live_ = 0;
};

} // namespace

Timeline run_frontier(const lowering::TaskGraph& graph, const std::vector<sg::Host*>& hosts, EngineSession& session,
                      const hardware::CommInterference& interference, std::vector<double> slowdowns, EngineStats* stats,
                      const EngineOptions& options) {
  Frontier frontier(graph, hosts, session, interference, std::move(slowdowns), options);
  return frontier.run(stats);
}

} // namespace twocs::engine::detail
