// Node interconnects (switch, mesh, ring, PCIe), shared NICs, three-level fat trees and per-hop
// latency: the links build_topology derives and the closed-form routes.
#include <doctest/doctest.h>

#include <twocs/hardware/cluster.hpp>
#include <twocs/platform/collective_context.hpp>
#include <twocs/platform/topology.hpp>

using namespace twocs;
using doctest::Approx;

namespace {

hardware::ClusterSpec cluster_of(std::int64_t nodes, std::int64_t devices, hardware::NodeTopology node) {
  hardware::ClusterSpec c;
  c.name = "test";
  c.nodes = nodes;
  c.node.devices = devices;
  c.node.topology = node;
  c.node.interconnect = {units::bytes_per_second(448e9), units::seconds(3e-6)};
  c.network.link = {units::bytes_per_second(50e9), units::seconds(5e-6)};
  c.network.nodes_per_switch = 4;
  return c;
}

} // namespace

TEST_CASE("a mesh gives each pair its share of a device's bandwidth, one hop of the node latency") {
  const auto t = platform::build_topology(cluster_of(1, 8, hardware::NodeTopology::mesh), 8);
  CHECK(t.device_link.bandwidth.value() == Approx(448e9 / 7));
  CHECK(t.node_hops(0, 5) == 1);
  CHECK(t.route_latency(0, 5).value() == Approx(3e-6));
  CHECK(t.route_bandwidth(0, 5).value() == Approx(448e9 / 7));
  const auto context = platform::collective_context(t, 8);
  CHECK(context.intra_bandwidth.value() == Approx(448e9));
  CHECK(context.intra_pair_bandwidth.value() == Approx(448e9 / 7));
}

TEST_CASE("a ring links neighbours with half a device's bandwidth, other pairs go the shorter way") {
  const auto t = platform::build_topology(cluster_of(1, 8, hardware::NodeTopology::ring), 8);
  CHECK(t.device_link.bandwidth.value() == Approx(224e9));
  CHECK(t.node_hops(0, 1) == 1);
  CHECK(t.node_hops(0, 7) == 1);
  CHECK(t.node_hops(1, 5) == 4);
  CHECK(t.node_hops(6, 1) == 3);
  CHECK(t.route_latency(6, 1).value() == Approx(9e-6));
}

TEST_CASE("a switch or PCIe node: two links of half the latency") {
  for (const auto node : {hardware::NodeTopology::switch_, hardware::NodeTopology::pcie}) {
    const auto t = platform::build_topology(cluster_of(1, 4, node), 4);
    CHECK(t.node_hops(0, 3) == 2);
    CHECK(t.route_latency(0, 3).value() == Approx(3e-6));
    CHECK(t.device_link.bandwidth.value() == Approx(448e9));
  }
}

TEST_CASE("devices sharing a NIC: fewer NICs, a thinner leaf link, a smaller share each") {
  auto c = cluster_of(2, 8, hardware::NodeTopology::switch_);
  c.network.devices_per_nic = 2;
  const auto t = platform::build_topology(c, 16);
  CHECK(t.nics_per_node() == 4);
  CHECK(t.fabric_link.bandwidth.value() == Approx(4 * 50e9));
  CHECK(platform::collective_context(t, 16).inter_bandwidth.value() == Approx(25e9));
  CHECK(platform::schedule_shape(t, 16).channels == 4); // one ring per NIC
}

TEST_CASE("three levels once the nodes outgrow a pod, each level thinned by its oversubscription") {
  auto c = cluster_of(2048, 8, hardware::NodeTopology::switch_);
  c.network.nodes_per_switch = 32;
  c.network.switches_per_pod = 16;
  c.network.oversubscription = 2;
  c.network.upper_oversubscription = 4;
  const auto t = platform::build_topology(c, 2048 * 8);
  REQUIRE(t.fabric.levels == 3);
  CHECK(t.fabric.down == std::vector<unsigned>{32, 16, 4});
  CHECK(t.fabric.up == std::vector<unsigned>{1, 16, 4});
  CHECK(t.fabric.leaves() == 2048);
  CHECK(t.fabric.oversubscription() == 2);
  CHECK(t.fabric.upper_oversubscription() == 4);
  // Within a pod but not a leaf: 4 fabric links; across pods: 6.
  c.network.hop_latency = units::seconds(0.3e-6);
  const auto h = platform::build_topology(c, 2048 * 8);
  CHECK(h.route_latency(0, 8).value() == Approx(5e-6 + 2 * 0.3e-6));       // same leaf switch
  CHECK(h.route_latency(0, 32 * 8).value() == Approx(5e-6 + 4 * 0.3e-6));  // same pod
  CHECK(h.route_latency(0, 512 * 8).value() == Approx(5e-6 + 6 * 0.3e-6)); // another pod
  // Few nodes stay within one pod: two levels.
  CHECK(platform::build_topology(c, 64 * 8).fabric.levels == 2);
}
