// A rail-optimized fat tree simulated: same-rail and cross-rail transfer times, PXN against the
// spine, and the oversubscription of the rail leaf switches.
#include <doctest/doctest.h>

#include "engine_test_support.hpp"

using namespace twocs;
using namespace twocs::engine::test;

namespace {

constexpr double size = 100e6;
constexpr double nic = 25e9, net_latency = 5e-6, node_bw = 300e9, node_latency = 1e-6;

// 4 nodes of 4 devices (4 rails), 2 nodes per leaf switch: groups {0, 1} and {2, 3}.
platform::Topology rail_tree(double oversubscription, hardware::CrossRail cross = hardware::CrossRail::pxn) {
  ClusterLinks links;
  links.nodes = 4;
  links.devices_per_node = 4;
  links.nodes_per_switch = 2;
  links.oversubscription = oversubscription;
  auto cluster = make_cluster(links);
  cluster.network.topology = hardware::NetworkTopology::rail_fat_tree;
  cluster.network.cross_rail = cross;
  return platform::build_topology(cluster, cluster.device_count());
}

double simulate_one(const platform::Topology& t, lowering::DeviceId from, lowering::DeviceId to) {
  lowering::TaskGraph graph(t.devices);
  const auto id = add_transfer(graph, from, to, units::bytes(size));
  return duration_of(engine::simulate(graph, t), id);
}

} // namespace

TEST_CASE("same-rail transfers cost S/B + L whether or not they cross the spine") {
  const auto t = rail_tree(1.0);
  CHECK(simulate_one(t, 1, 5) == exactly(size / nic + net_latency));  // same group
  CHECK(simulate_one(t, 1, 13) == exactly(size / nic + net_latency)); // across the spine
}

TEST_CASE("a cross-rail transfer with PXN pays the node latency too, through the spine it does not") {
  const double pxn = simulate_one(rail_tree(1.0), 0, 13);
  CHECK(pxn == exactly(size / nic + node_latency + net_latency));
  const double spine = simulate_one(rail_tree(1.0, hardware::CrossRail::spine), 0, 13);
  CHECK(spine == exactly(size / nic + net_latency));
}

TEST_CASE("PXN sends cross-rail flows through the destination rail's NIC, where they meet") {
  // Node 0 device 0 -> node 2 device 1 and node 0 device 1 -> node 3 device 1: both leave
  // through node 0's rail-1 NIC with PXN (each gets half), through their own NICs via the spine.
  for (const auto cross : {hardware::CrossRail::pxn, hardware::CrossRail::spine}) {
    CAPTURE(static_cast<int>(cross));
    const auto t = rail_tree(1.0, cross);
    lowering::TaskGraph graph(16);
    const auto a = add_transfer(graph, 0, 9, units::bytes(size));
    const auto b = add_transfer(graph, 1, 13, units::bytes(size));
    const auto timeline = engine::simulate(graph, t);
    if (cross == hardware::CrossRail::pxn) {
      // b runs at half the NIC while a shares it; a also pays the node hop's latency, and CM02
      // weights shares by route latency, so the two need not finish together: both take longer
      // than alone and their bytes need the NIC for 2 S / B.
      CHECK(std::max(duration_of(timeline, a), duration_of(timeline, b)) >= 2 * size / nic);
    } else {
      CHECK(duration_of(timeline, a) == exactly(size / nic + net_latency));
      CHECK(duration_of(timeline, b) == exactly(size / nic + net_latency));
    }
  }
}

TEST_CASE("a 2:1 rail leaf halves same-rail traffic across groups and leaves traffic within a group alone") {
  for (const double oversubscription : {1.0, 2.0}) {
    CAPTURE(oversubscription);
    const auto t = rail_tree(oversubscription);
    // Rail 0 of nodes 0 and 1 (group 0) to rail 0 of nodes 2 and 3 (group 1): both flows climb
    // the group's rail-0 leaf, whose uplinks carry 2 / oversubscription NICs' worth.
    lowering::TaskGraph across(16);
    const auto a = add_transfer(across, 0, 8, units::bytes(size));
    const auto b = add_transfer(across, 4, 12, units::bytes(size));
    const auto crossing = engine::simulate(across, t);
    const double expected = size / nic * oversubscription + net_latency;
    CHECK(duration_of(crossing, a) == exactly(expected));
    CHECK(duration_of(crossing, b) == exactly(expected));
    lowering::TaskGraph within(16);
    const auto c = add_transfer(within, 0, 4, units::bytes(size));
    const auto d = add_transfer(within, 8, 12, units::bytes(size));
    const auto staying = engine::simulate(within, t);
    CHECK(duration_of(staying, c) == exactly(size / nic + net_latency));
    CHECK(duration_of(staying, d) == exactly(size / nic + net_latency));
  }
}

TEST_CASE("the node interconnect inside a routed network behaves as in the fat tree") {
  const auto t = rail_tree(1.0);
  CHECK(simulate_one(t, 0, 3) == exactly(size / node_bw + node_latency));
}
