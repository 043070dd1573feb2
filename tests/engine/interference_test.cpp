// Compute-communication interference (src/engine/comm_interference.hpp): while a device sends or
// receives a transfer, its compute kernels progress at 1 / (1 + compute_slowdown) of full speed.
// Closed forms: a kernel of duration d that overlaps communication for T seconds from its start
// finishes at T + (d - T / (1 + s)) when T / (1 + s) < d.
#include <doctest/doctest.h>

#include "engine_test_support.hpp"

using namespace twocs;
using namespace twocs::engine::test;

namespace {
const ClusterLinks links{}; // 300 GB/s + 1 us between devices of a node
const double nvlink = links.node_bandwidth.value();
const double node_latency = links.node_latency.value();

platform::Topology topology_with(double slowdown) {
  auto topology = make_topology(links);
  topology.interference.compute_slowdown = slowdown;
  return topology;
}
} // namespace

TEST_CASE("a kernel overlapped by a transfer of its device pays the slowdown for the overlap only") {
  const double d = 10e-3, s = 0.25, bytes = 600e6;
  const double t = bytes / nvlink + node_latency; // the transfer, unaffected
  lowering::TaskGraph graph(8);
  const auto kernel = add_compute(graph, 0, units::seconds(d));
  SUBCASE("device 0 sends") {
    const auto transfer = add_transfer(graph, 0, 1, units::bytes(bytes));
    const auto timeline = engine::simulate(graph, topology_with(s));
    CHECK(duration_of(timeline, transfer) == exactly(t));
    CHECK(finish_of(timeline, kernel) == exactly(t + (d - t / (1 + s))));
  }
  SUBCASE("device 0 receives") {
    add_transfer(graph, 1, 0, units::bytes(bytes));
    CHECK(finish_of(engine::simulate(graph, topology_with(s)), kernel) == exactly(t + (d - t / (1 + s))));
  }
  SUBCASE("a transfer between two other devices costs device 0 nothing") {
    add_transfer(graph, 2, 3, units::bytes(bytes));
    CHECK(finish_of(engine::simulate(graph, topology_with(s)), kernel) == exactly(d));
  }
  SUBCASE("0 turns it off") {
    add_transfer(graph, 0, 1, units::bytes(bytes));
    CHECK(finish_of(engine::simulate(graph, topology_with(0)), kernel) == exactly(d));
  }
}

TEST_CASE("two transfers in flight slow a kernel once, until the last one ends") {
  const double d = 10e-3, s = 0.5;
  const double short_t = 300e6 / nvlink + node_latency, long_t = 900e6 / nvlink + node_latency;
  lowering::TaskGraph graph(8);
  const auto kernel = add_compute(graph, 0, units::seconds(d));
  add_transfer(graph, 0, 1, units::bytes(300e6));
  add_transfer(graph, 2, 0, units::bytes(900e6));
  const auto timeline = engine::simulate(graph, topology_with(s));
  REQUIRE(short_t < long_t);
  CHECK(finish_of(timeline, kernel) == exactly(long_t + (d - long_t / (1 + s))));
}

TEST_CASE("a kernel that starts after the transfer ended runs at full speed") {
  const double d = 1e-3, bytes = 300e6;
  const double t = bytes / nvlink + node_latency;
  lowering::TaskGraph graph(8);
  const auto transfer = add_transfer(graph, 0, 1, units::bytes(bytes));
  const auto kernel = add_compute(graph, 0, units::seconds(d));
  graph.add_dependency(transfer, kernel);
  CHECK(finish_of(engine::simulate(graph, topology_with(0.3)), kernel) == exactly(t + d));
}
