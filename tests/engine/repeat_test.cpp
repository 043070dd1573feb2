// Several simulations in one process: SimGrid 3.32 keeps its configuration, its static signals
// and its clock across engines; the engine layer must hide all three. Identical inputs give
// identical timelines, bit for bit.
#include <doctest/doctest.h>

#include "engine_test_support.hpp"

using namespace twocs;
using namespace twocs::engine::test;
using namespace twocs::units::literals;

namespace {

/// Compute chains on every device with transfers that contend for NICs and device links.
lowering::TaskGraph busy_graph(lowering::DeviceId devices) {
  lowering::TaskGraph graph(devices);
  std::vector<lowering::TaskId> last(static_cast<std::size_t>(devices));
  for (lowering::DeviceId d = 0; d < devices; ++d) last[d] = add_compute(graph, d, units::seconds(1e-4 * (d + 1)));
  for (int round = 0; round < 5; ++round) {
    for (lowering::DeviceId d = 0; d < devices; ++d) {
      const auto peer = static_cast<lowering::DeviceId>((d * 3 + round + 1) % devices);
      if (peer == d) continue;
      const auto send = add_transfer(graph, d, peer, units::bytes(1e6 * (round + 1)));
      graph.add_dependency(last[d], send);
      const auto work = add_compute(graph, peer, units::seconds(3e-5));
      graph.add_dependency(send, work);
      graph.add_dependency(last[peer], work);
      last[peer] = work;
    }
  }
  return graph;
}

void check_identical(const engine::Timeline& a, const engine::Timeline& b) {
  REQUIRE(a.tasks.size() == b.tasks.size());
  for (std::size_t i = 0; i < a.tasks.size(); ++i) {
    CAPTURE(i);
    CHECK(a.tasks[i].start.value() == b.tasks[i].start.value());
    CHECK(a.tasks[i].finish.value() == b.tasks[i].finish.value());
  }
  CHECK(a.makespan.value() == b.makespan.value());
}

} // namespace

TEST_CASE("two simulations in a row give identical timelines") {
  const auto topology = make_topology({});
  const auto graph = busy_graph(8);
  engine::EngineStats first_stats, second_stats;
  const auto first = engine::simulate(graph, topology, {}, &first_stats);
  const auto second = engine::simulate(graph, topology, {}, &second_stats);
  CHECK(first.makespan.value() > 0);
  check_identical(first, second);
  CHECK(first_stats.activities == graph.size());
  CHECK(first_stats.activities == second_stats.activities);
  CHECK(first_stats.peak_live_activities == second_stats.peak_live_activities);
}

TEST_CASE("a simulation is unaffected by a different one run before it") {
  const auto small = make_topology({});
  ClusterLinks big_links;
  big_links.nodes = 6;
  big_links.network_latency = 7_us;
  const auto big = make_topology(big_links);
  const auto graph = busy_graph(8);
  const auto before = engine::simulate(graph, small);
  (void)engine::simulate(busy_graph(24), big); // different platform, longer clock
  const auto after = engine::simulate(graph, small);
  check_identical(before, after);
  // Times start at 0 whatever the SimGrid clock says.
  lowering::TaskGraph one(2);
  const auto t = add_transfer(one, 0, 1, 1_GB);
  const auto timeline = engine::simulate(one, small);
  CHECK(start_of(timeline, t) == 0.0);
  CHECK(finish_of(timeline, t) == exactly(1e9 / 300e9 + 1e-6));
}

TEST_CASE("a two-level fat tree gives identical timelines after other fat trees were built") {
  // SimGrid 3.32 numbers fat-tree leaves with a process-wide counter that never resets, and its
  // D-mod-K routing picks uplinks from those numbers: later simulations see the uplinks
  // rotated. The timing must not depend on it.
  ClusterLinks links;
  links.nodes = 12;
  links.devices_per_node = 2;
  links.nodes_per_switch = 4;
  links.oversubscription = 2;
  const auto topology = make_topology(links);
  REQUIRE(topology.fabric.levels == 2);
  lowering::TaskGraph graph(24);
  for (lowering::DeviceId d = 0; d < 24; ++d) {
    add_transfer(graph, d, (d * 7 + 5) % 24 == d ? (d + 1) % 24 : (d * 7 + 5) % 24, units::bytes(1e6 * (d % 5 + 1)));
    add_transfer(graph, d, (d + 9) % 24, units::bytes(3e6));
  }
  const auto first = engine::simulate(graph, topology);
  for (const std::int64_t nodes : {3, 5, 7}) { // fat trees of 3, 8 and 8 leaves in between
    ClusterLinks other = links;
    other.nodes = nodes;
    other.devices_per_node = 1;
    lowering::TaskGraph tiny(1);
    add_compute(tiny, 0, 1_ms);
    (void)engine::simulate(tiny, make_topology(other));
    check_identical(first, engine::simulate(graph, topology));
  }
}
