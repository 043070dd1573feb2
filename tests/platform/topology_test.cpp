// build_topology: nodes, links and fat-tree shape from a cluster description, and the closed-form
// route latency and bandwidth the engine tests rely on.
#include <doctest/doctest.h>

#include <stdexcept>

#include <twocs/hardware/cluster.hpp>
#include <twocs/platform/topology.hpp>

using namespace twocs;
using doctest::Approx;

namespace {

hardware::ClusterSpec dgx_like(std::int64_t nodes) {
  hardware::ClusterSpec c;
  c.name = "dgx-like";
  c.nodes = nodes;
  c.node.devices = 8;
  c.node.interconnect = {units::bytes_per_second(300e9), units::seconds(2e-6)};
  c.network.link = {units::bytes_per_second(25e9), units::seconds(5e-6)};
  c.network.nodes_per_switch = 32;
  return c;
}

} // namespace

TEST_CASE("nodes hold the job's devices in order, a partial last node counts") {
  const auto cluster = dgx_like(420);
  CHECK(platform::build_topology(cluster, 1).nodes == 1);
  CHECK(platform::build_topology(cluster, 8).nodes == 1);
  CHECK(platform::build_topology(cluster, 9).nodes == 2);
  const auto t = platform::build_topology(cluster, 1024);
  CHECK(t.name == "dgx-like");
  CHECK(t.devices == 1024);
  CHECK(t.devices_per_node == 8);
  CHECK(t.nodes == 128);
  CHECK(t.node_of(0) == 0);
  CHECK(t.node_of(7) == 0);
  CHECK(t.node_of(8) == 1);
  CHECK(t.same_node(8, 15));
  CHECK_FALSE(t.same_node(7, 8));
}

TEST_CASE("links split the configured end-to-end latency over a route's two hops") {
  const auto t = platform::build_topology(dgx_like(4), 32);
  CHECK(t.device_link.bandwidth.value() == 300e9);
  CHECK(t.device_link.latency.value() == Approx(1e-6));
  CHECK(t.nic_link.bandwidth.value() == 25e9);
  CHECK(t.nic_link.latency.value() == Approx(2.5e-6));
  // Fabric: no latency (equal route latencies keep CM02's sharing fair), and a node's leaf link
  // carries all of its NICs.
  CHECK(t.fabric_link.latency.value() == 0.0);
  CHECK(t.fabric_link.bandwidth.value() == Approx(8 * 25e9));
}

TEST_CASE("routes have exactly the configured latency and their narrowest link's bandwidth") {
  auto cluster = dgx_like(64);
  cluster.network.nodes_per_switch = 4;
  cluster.network.oversubscription = 2;
  const auto t = platform::build_topology(cluster, 512);
  REQUIRE(t.fabric.levels == 2);
  CHECK(t.route_latency(0, 7).value() == Approx(2e-6).epsilon(1e-12));
  CHECK(t.route_latency(0, 8).value() == Approx(5e-6).epsilon(1e-12));   // same leaf switch
  CHECK(t.route_latency(0, 511).value() == Approx(5e-6).epsilon(1e-12)); // across the spine
  CHECK(t.route_bandwidth(3, 4).value() == 300e9);
  CHECK(t.route_bandwidth(3, 500).value() == 25e9);
}

TEST_CASE("one leaf switch when all nodes fit under it") {
  const auto t = platform::build_topology(dgx_like(420), 256); // 32 nodes, 32 per switch
  CHECK(t.fabric.levels == 1);
  CHECK(t.fabric.down == std::vector<unsigned>{32});
  CHECK(t.fabric.up == std::vector<unsigned>{1});
  CHECK(t.fabric.parallel == std::vector<unsigned>{1});
  CHECK(t.fabric.leaves() == 32);
  CHECK(t.fabric.oversubscription() == 1.0);
}

TEST_CASE("a network switch is one level whatever the node count") {
  auto cluster = dgx_like(420);
  cluster.network.topology = hardware::NetworkTopology::switch_;
  cluster.network.oversubscription = 4; // no upper level to thin
  const auto t = platform::build_topology(cluster, 3360);
  CHECK(t.fabric.levels == 1);
  CHECK(t.fabric.down == std::vector<unsigned>{420});
  CHECK(t.fabric.oversubscription() == 1.0);
}

TEST_CASE("two levels beyond one leaf switch, thinned by the oversubscription") {
  auto cluster = dgx_like(420);
  SUBCASE("non-blocking") {
    const auto t = platform::build_topology(cluster, 3360); // 420 nodes
    CHECK(t.fabric.levels == 2);
    CHECK(t.fabric.down == std::vector<unsigned>{32, 14}); // ceil(420 / 32) leaf switches
    CHECK(t.fabric.up == std::vector<unsigned>{1, 32});
    CHECK(t.fabric.parallel == std::vector<unsigned>{1, 1});
    CHECK(t.fabric.leaves() == 448);
    CHECK(t.fabric.oversubscription() == 1.0);
  }
  SUBCASE("2:1") {
    cluster.network.oversubscription = 2;
    const auto t = platform::build_topology(cluster, 264); // 33 nodes: one more than a switch holds
    CHECK(t.fabric.down == std::vector<unsigned>{32, 2});
    CHECK(t.fabric.up == std::vector<unsigned>{1, 16});
    CHECK(t.fabric.oversubscription() == 2.0);
  }
  SUBCASE("the effective oversubscription is k / round(k / requested)") {
    cluster.network.nodes_per_switch = 4;
    cluster.network.oversubscription = 3; // 4 / 3 rounds to 1 uplink
    const auto t = platform::build_topology(cluster, 80);
    CHECK(t.fabric.up == std::vector<unsigned>{1, 1});
    CHECK(t.fabric.oversubscription() == 4.0);
    cluster.network.oversubscription = 100; // never fewer than one uplink
    CHECK(platform::build_topology(cluster, 80).fabric.up == std::vector<unsigned>{1, 1});
  }
}

TEST_CASE("invalid requests are rejected") {
  const auto cluster = dgx_like(2);
  CHECK_THROWS_AS((void)platform::build_topology(cluster, 0), std::invalid_argument);
  CHECK_THROWS_AS((void)platform::build_topology(cluster, -3), std::invalid_argument);
  CHECK_THROWS_AS((void)platform::build_topology(cluster, 17), std::invalid_argument);
  CHECK_NOTHROW((void)platform::build_topology(cluster, 16));
  auto bad = cluster;
  bad.network.link.bandwidth = units::bytes_per_second(0);
  CHECK_THROWS_AS((void)platform::build_topology(bad, 4), std::invalid_argument);
  bad = cluster;
  bad.node.interconnect.latency = units::seconds(-1e-6);
  CHECK_THROWS_AS((void)platform::build_topology(bad, 4), std::invalid_argument);
  bad = cluster;
  bad.network.oversubscription = 0.5;
  CHECK_THROWS_AS((void)platform::build_topology(bad, 4), std::invalid_argument);
}
