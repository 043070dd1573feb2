// Compute tasks on the simulated hosts: durations come out exactly as given, chains add up,
// and unordered tasks on one device share it (which is why the lowering chains each stream).
#include <doctest/doctest.h>

#include "engine_test_support.hpp"

using namespace twocs;
using namespace twocs::engine::test;
using namespace twocs::units::literals;

TEST_CASE("one compute task takes exactly its duration") {
  const auto topology = make_topology({});
  lowering::TaskGraph graph(1);
  const double d = 1.2345678e-3;
  const auto id = add_compute(graph, 0, units::seconds(d));
  const auto timeline = engine::simulate(graph, topology);
  REQUIRE(timeline.tasks.size() == 1);
  CHECK(start_of(timeline, id) == 0.0);
  CHECK(finish_of(timeline, id) == exactly(d));
  CHECK(timeline.makespan.value() == exactly(d));
}

TEST_CASE("a chain of compute tasks takes the sum of their durations") {
  const auto topology = make_topology({});
  lowering::TaskGraph graph(2);
  const double durations[] = {1e-6, 3.5e-3, 2.25e-4, 7e-5, 1e-9};
  double expected = 0;
  lowering::TaskId previous = 0;
  for (std::size_t i = 0; i < std::size(durations); ++i) {
    // Alternate devices: a dependency across devices costs nothing by itself.
    const auto id = add_compute(graph, static_cast<lowering::DeviceId>(i % 2), units::seconds(durations[i]));
    if (i > 0) graph.add_dependency(previous, id);
    CHECK(engine::simulate(graph, topology).tasks.size() == i + 1);
    expected += durations[i];
    previous = id;
  }
  const auto timeline = engine::simulate(graph, topology);
  CHECK(timeline.makespan.value() == exactly(expected));
  CHECK(start_of(timeline, previous) == exactly(expected - durations[4]));
}

TEST_CASE("compute tasks on different devices run in parallel") {
  const auto topology = make_topology({});
  lowering::TaskGraph graph(8);
  for (lowering::DeviceId d = 0; d < 8; ++d) add_compute(graph, d, 2_ms);
  const auto timeline = engine::simulate(graph, topology);
  for (lowering::TaskId id = 0; id < 8; ++id) CHECK(finish_of(timeline, id) == exactly(2e-3));
}

// SimGrid shares a host's speed evenly among the executions running on it: two unordered
// kernels on one device each progress at half speed. The lowering therefore chains the tasks
// of a stream with order edges; this test documents the behaviour so nobody is surprised.
TEST_CASE("two unordered compute tasks on one device share it") {
  const auto topology = make_topology({});
  SUBCASE("equal durations: both take twice as long") {
    lowering::TaskGraph graph(1);
    const auto a = add_compute(graph, 0, 1_ms);
    const auto b = add_compute(graph, 0, 1_ms);
    const auto timeline = engine::simulate(graph, topology);
    CHECK(duration_of(timeline, a) == exactly(2e-3));
    CHECK(duration_of(timeline, b) == exactly(2e-3));
  }
  SUBCASE("unequal durations: half speed until the short one ends, then full speed") {
    lowering::TaskGraph graph(1);
    const double d1 = 1e-3, d2 = 3e-3;
    const auto a = add_compute(graph, 0, units::seconds(d1));
    const auto b = add_compute(graph, 0, units::seconds(d2));
    const auto timeline = engine::simulate(graph, topology);
    CHECK(finish_of(timeline, a) == exactly(2 * d1));
    CHECK(finish_of(timeline, b) == exactly(d1 + d2)); // same total work, host never idle
  }
}

TEST_CASE("zero-duration tasks complete at once and release their successors") {
  const auto topology = make_topology({});
  lowering::TaskGraph graph(2);
  const auto first = add_compute(graph, 0, 1_ms);
  const auto join = add_compute(graph, 1, 0_s, "join");
  const auto zero_bytes = add_transfer(graph, 1, 0, 0_B, "zero-byte transfer");
  const auto last = add_compute(graph, 0, 2_ms);
  graph.add_dependency(first, join);
  graph.add_dependency(join, zero_bytes);
  graph.add_dependency(zero_bytes, last);
  engine::EngineStats stats;
  const auto timeline = engine::simulate(graph, topology, {}, &stats);
  CHECK(start_of(timeline, join) == exactly(1e-3));
  CHECK(finish_of(timeline, join) == exactly(1e-3));
  CHECK(finish_of(timeline, zero_bytes) == exactly(1e-3));
  CHECK(finish_of(timeline, last) == exactly(3e-3));
  CHECK(stats.activities == 2); // only the tasks that cost something reach SimGrid
  CHECK(stats.peak_live_activities == 1);
}

TEST_CASE("an empty graph simulates to an empty timeline") {
  const auto topology = make_topology({});
  const lowering::TaskGraph graph(0);
  const auto timeline = engine::simulate(graph, topology);
  CHECK(timeline.tasks.empty());
  CHECK(timeline.makespan.value() == 0.0);
}

TEST_CASE("a platform of one device works") {
  ClusterLinks links;
  links.nodes = 1;
  links.devices_per_node = 1;
  const auto topology = make_topology(links);
  lowering::TaskGraph graph(1);
  const auto a = add_compute(graph, 0, 4_ms);
  const auto b = add_compute(graph, 0, 1_ms);
  graph.add_dependency(a, b);
  CHECK(engine::simulate(graph, topology).makespan.value() == exactly(5e-3));
}
