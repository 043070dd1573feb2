// A ring all-reduce built by hand from point-to-point transfers matches the classic closed form
// 2(n-1)/n * S/B + 2(n-1) * L (Patarasuk and Yuan, "Bandwidth optimal all-reduce algorithms for
// clusters of workstations", JPDC 2009; Thakur et al., "Optimization of Collective Communication
// Operations in MPICH", IJHPCA 2005) on a non-blocking switch.
#include <doctest/doctest.h>

#include <vector>

#include "engine_test_support.hpp"

using namespace twocs;
using namespace twocs::engine::test;

namespace {

/// Ring all-reduce of `size` bytes per rank over `ranks`: 2(n-1) steps (reduce-scatter, then
/// all-gather); in step k rank i sends size/n to rank i+1 once it received step k-1's chunk and
/// finished its own previous send. Returns the transfers of the last step.
std::vector<lowering::TaskId> add_ring_all_reduce(lowering::TaskGraph& graph,
                                                  const std::vector<lowering::DeviceId>& ranks, double size) {
  const auto n = ranks.size();
  const units::Bytes chunk = units::bytes(size / static_cast<double>(n));
  std::vector<lowering::TaskId> previous; // previous[i]: rank i's send of the previous step
  for (std::size_t step = 0; step < 2 * (n - 1); ++step) {
    std::vector<lowering::TaskId> current(n);
    for (std::size_t i = 0; i < n; ++i) current[i] = add_transfer(graph, ranks[i], ranks[(i + 1) % n], chunk, "ring");
    if (!previous.empty()) {
      for (std::size_t i = 0; i < n; ++i) {
        graph.add_dependency(previous[(i + n - 1) % n], current[i]); // the chunk that arrived at rank i
        graph.add_dependency(previous[i], current[i]);               // rank i's own previous send
      }
    }
    previous = current;
  }
  return previous;
}

double ring_closed_form(std::size_t n, double size, double bandwidth, double latency) {
  const double steps = 2.0 * static_cast<double>(n - 1);
  return steps / static_cast<double>(n) * size / bandwidth + steps * latency;
}

} // namespace

TEST_CASE("a ring all-reduce inside a node matches 2(n-1)/n S/B + 2(n-1) L") {
  ClusterLinks links;
  links.nodes = 1;
  links.devices_per_node = 8;
  const auto topology = make_topology(links);
  lowering::TaskGraph graph(8);
  const double size = 1e9;
  add_ring_all_reduce(graph, {0, 1, 2, 3, 4, 5, 6, 7}, size);
  const auto timeline = engine::simulate(graph, topology);
  CHECK(graph.size() == 8 * 14);
  CHECK(timeline.makespan.value() ==
        exactly(ring_closed_form(8, size, links.node_bandwidth.value(), links.node_latency.value())));
}

TEST_CASE("a ring all-reduce across nodes on a network switch matches the closed form") {
  for (const std::int64_t n : {2, 5, 16}) {
    CAPTURE(n);
    ClusterLinks links;
    links.nodes = n;
    links.devices_per_node = 1;
    links.network = hardware::NetworkTopology::switch_;
    const auto topology = make_topology(links);
    lowering::TaskGraph graph(static_cast<lowering::DeviceId>(n));
    std::vector<lowering::DeviceId> ranks;
    for (lowering::DeviceId d = 0; d < n; ++d) ranks.push_back(d);
    const double size = 64e6;
    add_ring_all_reduce(graph, ranks, size);
    const auto timeline = engine::simulate(graph, topology);
    CHECK(timeline.makespan.value() ==
          exactly(ring_closed_form(static_cast<std::size_t>(n), size, links.nic_bandwidth.value(),
                                   links.network_latency.value())));
  }
}

TEST_CASE("rings of the same rank across nodes share no link") {
  // Eight concurrent rings, one per local rank, across four nodes of a non-blocking fat tree:
  // each ring uses its own NICs and the leaf links carry the aggregate, so each takes exactly as
  // long as one ring alone.
  ClusterLinks links;
  links.nodes = 4;
  links.devices_per_node = 8;
  const auto topology = make_topology(links);
  lowering::TaskGraph graph(32);
  const double size = 32e6;
  for (lowering::DeviceId local = 0; local < 8; ++local)
    add_ring_all_reduce(graph, {local, local + 8, local + 16, local + 24}, size);
  const auto timeline = engine::simulate(graph, topology);
  CHECK(timeline.makespan.value() ==
        exactly(ring_closed_form(4, size, links.nic_bandwidth.value(), links.network_latency.value())));
}
