// The fat tree between nodes: an oversubscribed tree slows traffic that crosses leaf switches
// by the ratio of links down to links up, and leaves traffic under one leaf switch alone.
#include <doctest/doctest.h>

#include <algorithm>

#include "engine_test_support.hpp"

using namespace twocs;
using namespace twocs::engine::test;

namespace {

// 8 nodes of 2 devices under leaf switches of 4 nodes: two leaf switches, each with 4 links
// down and p = round(4 / oversubscription) links up to the spine.
ClusterLinks two_leaf_switches(double oversubscription) {
  ClusterLinks links;
  links.nodes = 8;
  links.devices_per_node = 2;
  links.nodes_per_switch = 4;
  links.oversubscription = oversubscription;
  return links;
}

constexpr double size = 100e6;

/// Every device sends `size` to every device of every other node.
lowering::TaskGraph all_to_all(const platform::Topology& topology) {
  const auto n = static_cast<lowering::DeviceId>(topology.devices);
  lowering::TaskGraph graph(n);
  for (lowering::DeviceId a = 0; a < n; ++a)
    for (lowering::DeviceId b = 0; b < n; ++b)
      if (!topology.same_node(a, b)) add_transfer(graph, a, b, units::bytes(size), "all-to-all");
  return graph;
}

} // namespace

TEST_CASE("a shift permutation across leaf switches slows down by the oversubscription") {
  for (const double oversubscription : {1.0, 2.0, 4.0}) {
    CAPTURE(oversubscription);
    const auto links = two_leaf_switches(oversubscription);
    const auto topology = make_topology(links);
    REQUIRE(topology.fabric.levels == 2);
    CHECK(topology.fabric.oversubscription() == oversubscription);
    // Device d sends to the same device of the node 4 further on, under the other leaf switch:
    // 8 flows leave each leaf switch over p uplinks of 2 NICs' bandwidth each (the routing
    // spreads destinations over the uplinks), so each flow gets B_nic * p / 4.
    lowering::TaskGraph graph(16);
    for (lowering::DeviceId d = 0; d < 16; ++d) add_transfer(graph, d, (d + 8) % 16, units::bytes(size));
    const auto timeline = engine::simulate(graph, topology);
    const double nic = links.nic_bandwidth.value();
    const double expected = size / nic * oversubscription + links.network_latency.value();
    for (lowering::TaskId id = 0; id < 16; ++id) CHECK(duration_of(timeline, id) == exactly(expected));
  }
}

TEST_CASE("traffic under one leaf switch ignores the oversubscription") {
  for (const double oversubscription : {1.0, 4.0}) {
    CAPTURE(oversubscription);
    const auto links = two_leaf_switches(oversubscription);
    const auto topology = make_topology(links);
    lowering::TaskGraph graph(16);
    for (lowering::DeviceId d = 0; d < 8; ++d) add_transfer(graph, d, (d + 2) % 8, units::bytes(size));
    const auto timeline = engine::simulate(graph, topology);
    const double expected = size / links.nic_bandwidth.value() + links.network_latency.value();
    for (lowering::TaskId id = 0; id < 8; ++id) CHECK(duration_of(timeline, id) == exactly(expected));
  }
}

TEST_CASE("all-to-all traffic slows down on an oversubscribed fat tree") {
  double previous = 0;
  for (const double oversubscription : {1.0, 2.0, 4.0}) {
    CAPTURE(oversubscription);
    const auto links = two_leaf_switches(oversubscription);
    const auto topology = make_topology(links);
    const auto timeline = engine::simulate(all_to_all(topology), topology);
    // The makespan is set by the busiest link (max-min fairness keeps it saturated):
    // a device's NIC carries 14 flows; a leaf switch's uplinks carry 8 x 8 = 64 flows over
    // p links of 2 B each.
    const double nic = links.nic_bandwidth.value();
    const double p = topology.fabric.up[1];
    const double nic_load = 14 * size / nic;
    const double uplink_load = 64 * size / (p * 2 * nic);
    CHECK(timeline.makespan.value() == exactly(std::max(nic_load, uplink_load) + links.network_latency.value()));
    CHECK(timeline.makespan.value() > previous);
    previous = timeline.makespan.value();
  }
}

TEST_CASE("a network switch and a one-level fat tree behave alike") {
  auto links = two_leaf_switches(1.0);
  links.nodes_per_switch = 8; // all 8 nodes under one switch
  const auto tree = make_topology(links);
  links.network = hardware::NetworkTopology::switch_;
  const auto crossbar = make_topology(links);
  CHECK(tree.fabric.levels == 1);
  CHECK(crossbar.fabric.levels == 1);
  const auto a = engine::simulate(all_to_all(tree), tree);
  const auto b = engine::simulate(all_to_all(crossbar), crossbar);
  CHECK(a.makespan.value() == exactly(14 * size / links.nic_bandwidth.value() + links.network_latency.value()));
  CHECK(a.makespan.value() == b.makespan.value());
}

TEST_CASE("a job on part of a large cluster pads the fat tree with empty leaves") {
  // 37 nodes under leaf switches of 8: 5 leaf switches, 3 padding leaves; 2 devices per node.
  ClusterLinks links;
  links.nodes = 64;
  links.devices_per_node = 2;
  links.nodes_per_switch = 8;
  const auto cluster = make_cluster(links);
  const auto topology = platform::build_topology(cluster, 73); // the last node holds one device
  CHECK(topology.nodes == 37);
  CHECK(topology.fabric.leaves() == 40);
  lowering::TaskGraph graph(73);
  const auto across = add_transfer(graph, 0, 72, units::bytes(size));
  const auto inside = add_transfer(graph, 70, 71, units::bytes(size));
  const auto timeline = engine::simulate(graph, topology);
  CHECK(duration_of(timeline, across) == exactly(size / links.nic_bandwidth.value() + links.network_latency.value()));
  CHECK(duration_of(timeline, inside) == exactly(size / links.node_bandwidth.value() + links.node_latency.value()));
}
