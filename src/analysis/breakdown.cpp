#include <twocs/analysis/breakdown.hpp>

#include <algorithm>
#include <array>
#include <cassert>
#include <vector>

namespace twocs::analysis {
namespace {

/// A start (+1) or end (-1) of an activity on the device: compute (the last channel) or a group.
struct Edge {
  double time;
  int channel;
  int delta;
};

constexpr int compute_channel = static_cast<int>(model::comm_group_count);

/// The device's tasks clipped to [from, to).
std::vector<Edge> edges_of(const lowering::TaskGraph& graph, const engine::Timeline& timeline,
                           lowering::DeviceId device, double from, double to) {
  std::vector<Edge> edges;
  for (lowering::TaskId id = 0; id < graph.size(); ++id) {
    // The host's launches occupy its CPU, not the device: a device waiting for them is idle.
    if (!graph.involves(id, device) || graph.task(id).is_host()) continue;
    const auto& t = timeline.tasks[id];
    const double start = std::max(t.start.value(), from);
    const double finish = std::min(t.finish.value(), to);
    if (!(finish > start)) continue; // instantaneous tasks occupy no time
    const int channel =
        graph.task(id).is_transfer() ? static_cast<int>(index(graph.transfer(id).group)) : compute_channel;
    edges.push_back({start, channel, +1});
    edges.push_back({finish, channel, -1});
  }
  // Ends before starts at equal times, so that back-to-back tasks leave no zero-length overlap.
  std::sort(edges.begin(), edges.end(),
            [](const Edge& a, const Edge& b) { return a.time < b.time || (a.time == b.time && a.delta < b.delta); });
  return edges;
}

} // namespace

DeviceBreakdown measure_device(const lowering::TaskGraph& graph, const engine::Timeline& timeline,
                               lowering::DeviceId device, units::Seconds iteration_time) {
  return measure_device_between(graph, timeline, device, units::Seconds(0), iteration_time);
}

DeviceBreakdown measure_device_between(const lowering::TaskGraph& graph, const engine::Timeline& timeline,
                                       lowering::DeviceId device, units::Seconds from, units::Seconds to) {
  DeviceBreakdown out;
  const units::Seconds iteration_time = to - from;
  const auto edges = edges_of(graph, timeline, device, from.value(), to.value());
  std::array<int, model::comm_group_count + 1> active{};
  double compute = 0, overlapped = 0, exposed = 0, comm_busy = 0;
  std::array<double, model::comm_group_count> exposed_by{}, busy_by{}, overlapped_by{};
  for (std::size_t i = 0; i + 1 < edges.size(); ++i) {
    active[static_cast<std::size_t>(edges[i].channel)] += edges[i].delta;
    const double length = edges[i + 1].time - edges[i].time;
    if (length <= 0) continue;
    int groups = 0;
    for (std::size_t g = 0; g < model::comm_group_count; ++g) {
      if (active[g] <= 0) continue;
      ++groups;
      busy_by[g] += length;
    }
    const bool computing = active[compute_channel] > 0;
    if (computing) compute += length;
    if (groups == 0) continue;
    comm_busy += length;
    if (computing) {
      overlapped += length;
      for (std::size_t g = 0; g < model::comm_group_count; ++g)
        if (active[g] > 0) overlapped_by[g] += length / groups;
      continue;
    }
    exposed += length;
    for (std::size_t g = 0; g < model::comm_group_count; ++g)
      if (active[g] > 0) exposed_by[g] += length / groups;
  }
  out.breakdown.compute = units::Seconds(compute);
  out.breakdown.overlapped_comm = units::Seconds(overlapped);
  out.breakdown.exposed_comm = units::Seconds(exposed);
  out.breakdown.idle = iteration_time - out.breakdown.compute - out.breakdown.exposed_comm;
  // Summing many intervals can leave a rounding residue of either sign; no idle time is negative.
  if (out.breakdown.idle.value() < 0) {
    assert(out.breakdown.idle.value() > -1e-9 * std::max(1.0, iteration_time.value()));
    out.breakdown.idle = units::Seconds(0);
  }
  out.comm_busy = units::Seconds(comm_busy);
  for (std::size_t g = 0; g < model::comm_group_count; ++g) {
    out.exposed_by_group[g] = units::Seconds(exposed_by[g]);
    out.busy_by_group[g] = units::Seconds(busy_by[g]);
    out.overlapped_by_group[g] = units::Seconds(overlapped_by[g]);
  }
  return out;
}

units::Seconds host_wait(const lowering::TaskGraph& graph, const engine::Timeline& timeline,
                         lowering::DeviceId device) {
  return host_wait_between(graph, timeline, device, units::Seconds(-1), timeline.makespan + units::Seconds(1));
}

units::Seconds host_wait_between(const lowering::TaskGraph& graph, const engine::Timeline& timeline,
                                 lowering::DeviceId device, units::Seconds from, units::Seconds to) {
  double waited = 0;
  if (!graph.has_host_tasks()) return units::Seconds(0);
  for (lowering::TaskId id = 0; id < graph.size(); ++id) {
    if (graph.task(id).device != device || !graph.task(id).is_kernel()) continue;
    const units::Seconds start = timeline.tasks[id].start;
    if (start < from || !(start < to)) continue;
    double launched = 0, otherwise_ready = 0;
    graph.for_each_predecessor(id, [&](lowering::TaskId before) {
      double& ready = graph.task(before).is_host() ? launched : otherwise_ready;
      ready = std::max(ready, timeline.tasks[before].finish.value());
    });
    waited += std::max(0.0, launched - otherwise_ready);
  }
  return units::Seconds(waited);
}

std::vector<bool> devices_running_kernels(const lowering::TaskGraph& graph) {
  std::vector<bool> running(static_cast<std::size_t>(graph.device_count()), false);
  for (lowering::TaskId id = 0; id < graph.size(); ++id)
    if (graph.task(id).is_kernel()) running[static_cast<std::size_t>(graph.task(id).device)] = true;
  return running;
}

lowering::DeviceId last_finishing_device(const lowering::TaskGraph& graph, const engine::Timeline& timeline) {
  // Devices folded away run no kernel: they are never measured (-1 marks them).
  const std::vector<bool> running = devices_running_kernels(graph);
  std::vector<double> last(running.size(), -1.0);
  for (std::size_t d = 0; d < running.size(); ++d)
    if (running[d]) last[d] = 0.0;
  for (lowering::TaskId id = 0; id < graph.size(); ++id) {
    const auto& task = graph.task(id);
    const double finish = timeline.tasks[id].finish.value();
    for (lowering::DeviceId d : {task.device, task.is_transfer() ? graph.transfer(id).peer : -1}) {
      if (d < 0) continue;
      auto& latest = last[static_cast<std::size_t>(d)];
      if (latest >= 0) latest = std::max(latest, finish);
    }
  }
  assert(!last.empty());
  return static_cast<lowering::DeviceId>(std::max_element(last.begin(), last.end()) - last.begin());
}

} // namespace twocs::analysis
