// Many tasks: the lazy frontier keeps SimGrid's live activities few, so a large DAG runs in
// time linear in its size. The rate is reported, not asserted (machines differ).
#include <doctest/doctest.h>

#include <chrono>
#include <vector>

#include "engine_test_support.hpp"

using namespace twocs;
using namespace twocs::engine::test;

namespace {

/// `steps` rounds on `devices` devices: each device computes, then sends its result to the next
/// device (a ring crossing nodes); a device's next compute waits for its previous one and for
/// the transfer into it.
lowering::TaskGraph pipeline_ring(lowering::DeviceId devices, int steps) {
  lowering::TaskGraph graph(devices);
  const auto n = static_cast<std::size_t>(devices);
  std::vector<lowering::TaskId> compute(n), incoming(n);
  for (int s = 0; s < steps; ++s) {
    for (std::size_t d = 0; d < n; ++d) {
      const auto work = add_compute(graph, static_cast<lowering::DeviceId>(d),
                                    units::seconds(1e-5 + 1e-7 * static_cast<double>(d)), "op");
      if (s > 0) {
        graph.add_dependency(compute[d], work);
        graph.add_dependency(incoming[d], work);
      }
      compute[d] = work;
    }
    for (std::size_t d = 0; d < n; ++d) {
      const auto to = (d + 1) % n;
      const auto send = add_transfer(graph, static_cast<lowering::DeviceId>(d), static_cast<lowering::DeviceId>(to),
                                     units::bytes(4e6), "send");
      graph.add_dependency(compute[d], send);
      incoming[to] = send;
    }
  }
  return graph;
}

} // namespace

TEST_CASE("200k tasks on 16 devices run quickly") {
  ClusterLinks links; // 2 nodes x 8 devices
  links.devices_per_node = 8;
  const auto topology = make_topology(links);
  const auto graph = pipeline_ring(16, 6250);
  REQUIRE(graph.size() == 200'000);
  engine::EngineStats stats;
  const auto begin = std::chrono::steady_clock::now();
  const auto timeline = engine::simulate(graph, topology, {}, &stats);
  const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - begin;
  CHECK(stats.activities == graph.size());
  CHECK(stats.peak_live_activities <= 32); // at most one compute and one transfer per device
  CHECK(timeline.makespan.value() > 0);
  std::size_t backwards = 0;
  for (const auto& t : timeline.tasks) backwards += t.finish < t.start ? 1 : 0;
  CHECK(backwards == 0);
  MESSAGE("simulated ", graph.size(), " tasks in ", wall.count(),
          " s: ", static_cast<double>(graph.size()) / wall.count(), " tasks/s; simulated makespan ",
          timeline.makespan.value(), " s");
}
