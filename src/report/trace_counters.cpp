#include <twocs/report/trace_counters.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

#include <twocs/lowering/rank_layout.hpp>
#include <twocs/platform/known_route.hpp>

namespace twocs::report {
namespace {

using lowering::DeviceId;
using lowering::TaskId;

/// A step of a counter: `change` added at `time` (seconds).
struct Delta {
  double time = 0;
  double change = 0;
};

/// The counter's samples over the filter's window: the value in force at the window's start,
/// then one sample per time the value changes, up to the window's end. Values are rounded to
/// 1 / `scale` (sums of rates leave residues of the order of 1e-12 where they should be 0).
std::vector<CounterSample> step_samples(std::vector<Delta> deltas, double initial, double scale,
                                        const TraceFilter& filter) {
  std::stable_sort(deltas.begin(), deltas.end(), [](const Delta& a, const Delta& b) { return a.time < b.time; });
  double raw = initial;
  const auto value = [&] { return std::round(raw * scale) / scale + 0.0; }; // + 0.0: no -0
  std::size_t i = 0;
  const double from = filter.from.value();
  while (i < deltas.size() && deltas[i].time <= from) raw += deltas[i++].change;
  std::vector<CounterSample> samples{{filter.from, value()}};
  while (i < deltas.size()) {
    const double t = deltas[i].time;
    if (filter.until && t > filter.until->value()) break;
    while (i < deltas.size() && deltas[i].time == t) raw += deltas[i++].change;
    if (const double v = value(); v != samples.back().value) samples.push_back({units::Seconds(t), v});
  }
  return samples;
}

/// Devices that run at least one task (folding mirrors the others: they have nothing to show).
std::vector<bool> simulated_devices(const lowering::TaskGraph& graph) {
  std::vector<bool> simulated(static_cast<std::size_t>(graph.device_count()), false);
  for (TaskId id = 0; id < graph.size(); ++id) simulated[static_cast<std::size_t>(graph.task(id).device)] = true;
  return simulated;
}

/// Whether the trace shows `link`: a device's own link (switch or PCIe node) only when the device
/// is simulated. Folding mirrors the others, and a mirror's link repeats its simulated peer's by
/// symmetry. Every other link (pair links, NICs, fabric) is shown when used.
bool shown(const platform::Topology& topology, std::int64_t link, const std::vector<bool>& simulated) {
  const bool own = topology.node_topology != hardware::NodeTopology::mesh &&
                   topology.node_topology != hardware::NodeTopology::ring && link < topology.nic_link_index(0, 0);
  if (!own) return true;
  const std::int64_t device =
      link / topology.node_link_count() * topology.devices_per_node + link % topology.node_link_count();
  return device < static_cast<std::int64_t>(simulated.size()) && simulated[static_cast<std::size_t>(device)];
}

/// The links of one sender-receiver pair and the latency its transfers pay before bytes move.
struct PairRoute {
  std::vector<platform::Hop> hops;
  double latency = 0;
};

} // namespace

std::vector<DeviceMemory> device_memory(const model::MemoryReport& memory, const model::Parallelism& parallelism) {
  const lowering::RankLayout layout(parallelism);
  std::vector<DeviceMemory> devices(static_cast<std::size_t>(layout.world_size()));
  for (DeviceId d = 0; d < layout.world_size(); ++d) {
    const auto stage = static_cast<std::size_t>(layout.coordinates(d).pipeline);
    if (stage >= memory.stages.size()) continue;
    const model::StageMemory& s = memory.stages[stage];
    const model::MemoryBreakdown& b = s.breakdown;
    DeviceMemory& m = devices[static_cast<std::size_t>(d)];
    m.resident = units::Bytes(std::round((b.total() - b.activations).value())); // whole bytes: exact sums
    const double held = static_cast<double>(std::max<std::int64_t>(1, s.micro_batches_in_flight * s.layers));
    m.layer_activations = units::Bytes(std::round(b.activations.value() / held));
  }
  return devices;
}

std::vector<CounterTrack> link_utilisation_tracks(const lowering::TaskGraph& graph, const engine::Timeline& timeline,
                                                  const platform::Topology& topology, const TraceFilter& filter) {
  const std::vector<bool> simulated = simulated_devices(graph);
  std::map<std::pair<DeviceId, DeviceId>, PairRoute> routes;
  std::map<std::int64_t, std::vector<Delta>> by_link; // link * 2 + up: the tracks in link order
  std::set<std::int64_t> kept;                        // the links a kept device's transfers cross
  for (TaskId id = 0; id < graph.size(); ++id) {
    const lowering::Task& task = graph.task(id);
    if (!task.is_transfer()) continue;
    const lowering::Transfer& x = graph.transfer(id);
    if (x.bytes.value() <= 0 || x.peer == task.device) continue;
    const bool keeps = filter.keeps(task.device) || filter.keeps(x.peer); // all traffic counts on its links
    auto [it, added] = routes.try_emplace({task.device, x.peer});
    if (added) {
      it->second.hops = platform::known_route(topology, task.device, x.peer);
      it->second.latency = topology.route_latency(task.device, x.peer).value();
    }
    // The engine pays latency_steps route latencies before the bytes move (engine/frontier.cpp).
    const engine::TaskTiming& t = timeline.tasks[id];
    double streaming = t.start.value() + x.latency_steps * it->second.latency;
    if (t.finish.value() <= streaming) streaming = t.start.value();
    if (t.finish.value() <= streaming) continue;
    const double rate = x.bytes.value() / (t.finish.value() - streaming); // bytes/s, the average
    for (const platform::Hop& hop : it->second.hops) {
      if (!shown(topology, hop.link, simulated)) continue;
      const double percent = 100.0 * rate / topology.link_model(hop.link).bandwidth.value();
      const std::int64_t key = hop.link * 2 + (hop.up ? 1 : 0);
      if (keeps) kept.insert(key);
      auto& deltas = by_link[key];
      deltas.push_back({streaming, percent});
      deltas.push_back({t.finish.value(), -percent});
    }
  }
  std::vector<CounterTrack> tracks;
  tracks.reserve(kept.size());
  for (auto& [key, deltas] : by_link) // whole percent: what a trace's counter shows, and fewer samples
    if (kept.contains(key))
      tracks.push_back({link_name(topology, key / 2, key % 2 == 1), CounterUnit::percent, std::nullopt,
                        step_samples(std::move(deltas), 0.0, 1.0, filter)});
  return tracks;
}

std::vector<CounterTrack> memory_tracks(const lowering::TaskGraph& graph, const engine::Timeline& timeline,
                                        const std::vector<DeviceMemory>& memory, const TraceFilter& filter) {
  // Per device, per (micro-batch, layer): first forward start, last backward finish.
  using Held = std::pair<double, double>;
  std::vector<std::map<std::pair<std::int32_t, std::int32_t>, Held>> held(memory.size());
  for (TaskId id = 0; id < graph.size(); ++id) {
    const lowering::Task& task = graph.task(id);
    const auto d = static_cast<std::size_t>(task.device);
    if (d >= memory.size() || task.layer < 0 || task.micro_batch < 0 || !filter.keeps(task.device)) continue;
    if (task.pass != model::Pass::forward && task.pass != model::Pass::backward) continue;
    const engine::TaskTiming& t = timeline.tasks[id];
    auto [it, added] =
        held[d].try_emplace({task.micro_batch, task.layer}, Held{t.start.value(), -1.0}); // -1: not yet freed
    if (task.pass == model::Pass::forward) it->second.first = std::min(it->second.first, t.start.value());
    if (task.pass == model::Pass::backward) it->second.second = std::max(it->second.second, t.finish.value());
  }
  const std::vector<bool> simulated = simulated_devices(graph);
  std::vector<CounterTrack> tracks;
  for (std::size_t d = 0; d < memory.size() && d < simulated.size(); ++d) {
    if (!simulated[d] || !filter.keeps(static_cast<DeviceId>(d))) continue;
    const double layer = memory[d].layer_activations.value();
    std::vector<Delta> deltas;
    for (const auto& [key, span] : held[d]) {
      deltas.push_back({span.first, layer});
      if (span.second >= 0) deltas.push_back({span.second, -layer});
    }
    tracks.push_back({"memory in use", CounterUnit::bytes, static_cast<DeviceId>(d),
                      step_samples(std::move(deltas), memory[d].resident.value(), 1.0, filter)});
  }
  return tracks;
}

std::string link_name(const platform::Topology& topology, std::int64_t link, bool up) {
  const std::int64_t g = topology.devices_per_node;
  const std::int64_t first_nic = topology.nic_link_index(0, 0);
  const std::int64_t first_fabric = topology.nic_link_index(topology.nodes, 0);
  if (link >= first_fabric) return fmt::format("fabric link {} {}", link - first_fabric, up ? "up" : "down");
  if (link >= first_nic) {
    const std::int64_t node = (link - first_nic) / topology.nics_per_node();
    const std::int64_t nic = (link - first_nic) % topology.nics_per_node();
    return up ? fmt::format("node {} NIC {} -> network", node, nic)
              : fmt::format("network -> node {} NIC {}", node, nic);
  }
  const std::int64_t node = link / topology.node_link_count(), local = link % topology.node_link_count();
  const std::int64_t base = node * g;
  std::int64_t a = local, b = (local + 1) % g; // ring: link i joins i and i + 1, up forward
  switch (topology.node_topology) {
  case hardware::NodeTopology::mesh: // pair (lo, hi) at lo (2g - lo - 1) / 2 + hi - lo - 1, up lo -> hi
    for (a = 0; (a + 1) * (2 * g - a - 2) / 2 <= local; ++a) {
    }
    b = local - a * (2 * g - a - 1) / 2 + a + 1;
    break;
  case hardware::NodeTopology::ring: break;
  default: // switch or PCIe: each device's own link to the node's switch, up from the device
    return up ? fmt::format("device {} -> node switch", base + local)
              : fmt::format("node switch -> device {}", base + local);
  }
  if (!up) std::swap(a, b);
  return fmt::format("device {} -> device {}", base + a, base + b);
}

} // namespace twocs::report
