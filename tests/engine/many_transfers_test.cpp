// Thousands of transfers alive at once (the engine starts them as network actions where SimGrid
// 3.32 allows it, src/engine/network_actions.hpp): each on its own links takes its closed form,
// and their successors start when they finish.
#include <doctest/doctest.h>

#include "engine_test_support.hpp"

using namespace twocs;
using namespace twocs::engine::test;

TEST_CASE("2048 transfers at once within nodes each take L + S / B, and their successors follow") {
  ClusterLinks links;
  links.nodes = 256;
  links.devices_per_node = 8;
  const auto topology = make_topology(links);
  const int n = 2048;
  lowering::TaskGraph graph(n);
  std::vector<lowering::TaskId> first, second;
  for (int i = 0; i < n; ++i) {
    // Device i sends to its neighbour in the node: one NVLink up and one down, used by no other.
    const int peer = i / 8 * 8 + (i % 8 + 1) % 8;
    const double bytes = 1e6 * (1 + i % 5); // five sizes: five finish dates
    first.push_back(add_transfer(graph, i, peer, units::Bytes(bytes)));
  }
  for (int i = 0; i < n; ++i) {
    second.push_back(add_compute(graph, i, units::seconds(1e-3)));
    graph.add_dependency(first[static_cast<std::size_t>(i)], second.back());
  }
  const auto t = engine::simulate(graph, topology);
  const double b = links.node_bandwidth.value(), l = links.node_latency.value();
  for (int i = 0; i < n; ++i) {
    CAPTURE(i);
    const double transfer = l + 1e6 * (1 + i % 5) / b;
    CHECK(start_of(t, first[static_cast<std::size_t>(i)]) == 0.0);
    CHECK(finish_of(t, first[static_cast<std::size_t>(i)]) == exactly(transfer));
    CHECK(finish_of(t, second[static_cast<std::size_t>(i)]) == exactly(transfer + 1e-3));
  }
}
