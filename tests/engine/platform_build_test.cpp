// Building the platform of a large cluster: one transfer on 1024 and 2048 nodes of 8 devices.
// The build time is reported, not asserted (machines differ); the transfer's time is checked.
#include <doctest/doctest.h>

#include <chrono>

#include "engine_test_support.hpp"

using namespace twocs;
using namespace twocs::engine::test;

TEST_CASE("a platform of thousands of nodes builds and routes across it") {
  for (const std::int64_t nodes : {1024, 2048}) {
    CAPTURE(nodes);
    ClusterLinks links;
    links.nodes = nodes;
    links.devices_per_node = 8;
    const auto topology = make_topology(links);
    const auto last = static_cast<lowering::DeviceId>(topology.devices - 1);
    lowering::TaskGraph graph(last + 1);
    add_transfer(graph, 0, last, units::bytes(1e6));
    const auto begin = std::chrono::steady_clock::now();
    const auto timeline = engine::simulate(graph, topology);
    const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - begin;
    // One NIC up, one down, fabric links of 8 NICs' bandwidth: the NIC is the bottleneck.
    CHECK(duration_of(timeline, 0) == exactly(1e6 / links.nic_bandwidth.value() + links.network_latency.value()));
    MESSAGE(nodes, " nodes (", topology.devices, " devices, ", topology.fabric.levels,
            "-level fabric): platform built and simulated in ", wall.count(), " s");
  }
}
