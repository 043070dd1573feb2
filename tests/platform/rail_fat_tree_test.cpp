// Rail-optimized fat trees: a leaf switch per rail per group of nodes, a spine above; routes
// within a rail, across rails (PXN or the spine) and their hop counts and latencies.
#include <doctest/doctest.h>

#include <twocs/hardware/cluster.hpp>
#include <twocs/platform/collective_context.hpp>
#include <twocs/platform/topology.hpp>

using namespace twocs;
using doctest::Approx;

namespace {

// 8 nodes of 4 devices, one NIC each (4 rails), groups of 2 nodes: 4 groups x 4 rails = 16 leaves.
hardware::ClusterSpec rails(std::int64_t nodes = 8) {
  hardware::ClusterSpec c;
  c.name = "rails";
  c.nodes = nodes;
  c.node.devices = 4;
  c.node.interconnect = {units::bytes_per_second(300e9), units::seconds(2e-6)};
  c.network.topology = hardware::NetworkTopology::rail_fat_tree;
  c.network.link = {units::bytes_per_second(50e9), units::seconds(5e-6)};
  c.network.nodes_per_switch = 2;
  return c;
}

std::size_t fabric_hops(const platform::Topology& t, std::int64_t a, std::int64_t b) {
  std::size_t n = 0;
  for (const auto& hop : t.route(a, b)) n += hop.link >= t.nic_link_index(t.nodes, 0) ? 1 : 0;
  return n;
}

} // namespace

TEST_CASE("a rail-optimized tree has a leaf switch per rail per group, uplinks of one NIC each") {
  const auto t = platform::build_topology(rails(), 32);
  REQUIRE(t.is_routed());
  CHECK(t.routed.rails == 4);
  CHECK(t.routed.leaves == 16);
  CHECK(t.routed.levels == 2);
  CHECK(t.routed.p1 == 2); // k = 2 nodes down, 2 up: non-blocking
  CHECK(t.fabric_link.bandwidth.value() == 50e9);
  // Device 1 of node 0 and device 1 of node 1 share rail 1's leaf switch of group 0.
  CHECK(t.rail_of(1) == 1);
  CHECK(t.routed.leaf_of(0, 1) == t.routed.leaf_of(1, 1));
  CHECK(t.routed.leaf_of(0, 1) != t.routed.leaf_of(2, 1));
  CHECK(t.routed.leaf_of(0, 1) != t.routed.leaf_of(0, 2));
}

TEST_CASE("same-rail traffic stays on its rail: under one leaf only the NICs, else up and down one spine") {
  auto c = rails();
  c.network.hop_latency = units::seconds(0.3e-6);
  const auto t = platform::build_topology(c, 32);
  // Node 0 device 1 -> node 1 device 1 (same group): NIC up, NIC down, 2 cables of the leaf.
  CHECK(t.route(1, 5).size() == 2);
  CHECK(t.route_latency(1, 5).value() == Approx(5e-6 + 2 * 0.3e-6));
  // Node 0 -> node 2 (another group): NIC, leaf uplink, spine downlink, NIC: 4 hops.
  CHECK(t.route(1, 9).size() == 4);
  CHECK(fabric_hops(t, 1, 9) == 2);
  CHECK(t.route_latency(1, 9).value() == Approx(5e-6 + 4 * 0.3e-6));
  CHECK(t.route_bandwidth(1, 9).value() == Approx(50e9));
}

TEST_CASE("cross-rail traffic: PXN crosses the node interconnect first, the spine option climbs the tree") {
  auto c = rails();
  const auto pxn = platform::build_topology(c, 32);
  // Node 0 device 0 (rail 0) -> node 1 device 1 (rail 1), same group: over NVLink to device 1,
  // then rail 1 (NIC up, NIC down): 2 node links + 2 NICs, latency L_node + L_net.
  CHECK(pxn.route(0, 5).size() == 4);
  CHECK(pxn.route_latency(0, 5).value() == Approx(2e-6 + 5e-6));
  CHECK(pxn.route(0, 5)[2].link == pxn.nic_link_index(0, 1));
  c.network.cross_rail = hardware::CrossRail::spine;
  const auto spine = platform::build_topology(c, 32);
  // Rail 0's leaf, up to the spine, down rail 1's leaf: NIC, uplink, downlink, NIC.
  CHECK(spine.route(0, 5).size() == 4);
  CHECK(spine.route(0, 5).front().link == spine.nic_link_index(0, 0));
  CHECK(fabric_hops(spine, 0, 5) == 2);
  CHECK(spine.route_latency(0, 5).value() == Approx(5e-6));
}

TEST_CASE("oversubscription per level: p1 = round(k / o1) rail uplinks, p2 = round(a R / o2) core links") {
  auto c = rails(64);
  c.network.nodes_per_switch = 8;
  c.network.oversubscription = 2;
  c.network.switches_per_pod = 2; // pods of 2 groups: 8 leaf switches (4 rails each)
  c.network.upper_oversubscription = 4;
  c.network.hop_latency = units::seconds(0.1e-6);
  const auto t = platform::build_topology(c, 256);
  CHECK(t.routed.leaves == 32); // 8 groups x 4 rails
  REQUIRE(t.routed.levels == 3);
  CHECK(t.routed.p1 == 4);
  CHECK(t.routed.p2 == 2);
  // Ideal routing bundles each leaf's p1 uplinks and each pod's p1 x p2 core links.
  const std::int64_t fabric = t.nic_link_index(t.nodes, 0);
  CHECK(t.link_model(fabric).bandwidth.value() == Approx(4 * 50e9));
  CHECK(t.link_model(t.link_count() - 1).bandwidth.value() == Approx(4 * 2 * 50e9));
  // Same rail: node 0 -> node 8 (next group, same pod), node 0 -> node 16 (next pod).
  CHECK(fabric_hops(t, 0, 8 * 4) == 2);
  CHECK(fabric_hops(t, 0, 16 * 4) == 4);
  CHECK(t.route_latency(0, 16 * 4).value() == Approx(5e-6 + 6 * 0.1e-6));
}

TEST_CASE("a rail-optimized tree gives collectives one NIC of bandwidth per rank, as the plain tree") {
  const auto t = platform::build_topology(rails(), 32);
  const auto n = platform::collective_network(t);
  CHECK(n.inter_bandwidth.value() == Approx(50e9));
  CHECK(n.inter_latency.value() == Approx(5e-6));
}

TEST_CASE("a fat tree with ideal routing keeps SimGrid's zone, ECMP or rails route flow by flow") {
  auto c = rails();
  c.network.topology = hardware::NetworkTopology::fat_tree;
  CHECK_FALSE(platform::build_topology(c, 32).is_routed());
  c.network.routing = hardware::Routing::ecmp;
  const auto ecmp = platform::build_topology(c, 32);
  REQUIRE(ecmp.is_routed());
  CHECK(ecmp.routed.rails == 1);
  CHECK(ecmp.fabric_link.bandwidth.value() == Approx(4 * 50e9)); // a node's NICs, as the SimGrid tree
  // Same leaf: NIC, leaf port up, leaf port down, NIC; across: two more, up and down one spine.
  CHECK(ecmp.route(0, 4).size() == 4);
  CHECK(ecmp.route(0, 8).size() == 6);
}
