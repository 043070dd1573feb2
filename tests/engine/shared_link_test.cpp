// Links that traffic really shares: devices behind one NIC, and a 2:1 oversubscribed upper tier
// of a three-level fat tree.
#include <doctest/doctest.h>

#include "engine_test_support.hpp"

using namespace twocs;
using namespace twocs::engine::test;

namespace {

constexpr double size = 100e6;

} // namespace

TEST_CASE("two transfers forced through one NIC each take twice as long as alone") {
  ClusterLinks links;
  links.nodes = 2;
  links.devices_per_node = 2;
  auto cluster = make_cluster(links);
  cluster.network.devices_per_nic = 2;
  const auto topology = platform::build_topology(cluster, 4);
  REQUIRE(topology.nics_per_node() == 1);
  const double nic = links.nic_bandwidth.value(), lat = links.network_latency.value();
  lowering::TaskGraph alone(4);
  add_transfer(alone, 0, 2, units::bytes(size));
  CHECK(engine::simulate(alone, topology).makespan.value() == exactly(size / nic + lat));
  lowering::TaskGraph both(4);
  add_transfer(both, 0, 2, units::bytes(size));
  add_transfer(both, 1, 3, units::bytes(size));
  const auto t = engine::simulate(both, topology);
  CHECK(duration_of(t, 0) == exactly(2 * size / nic + lat));
  CHECK(duration_of(t, 1) == exactly(2 * size / nic + lat));
  // With a NIC each, they do not meet.
  const auto own = make_topology(links);
  const auto t_own = engine::simulate(both, own);
  CHECK(duration_of(t_own, 0) == exactly(size / nic + lat));
}

TEST_CASE("a 2:1 oversubscribed upper tier slows cross-pod traffic and leaves traffic in a pod alone") {
  // 16 nodes of 1 device: leaf switches of 2 nodes, pods of 2 leaf switches (4 nodes), 4 pods.
  ClusterLinks links;
  links.nodes = 16;
  links.devices_per_node = 1;
  links.nodes_per_switch = 2;
  for (const double upper : {1.0, 2.0}) {
    CAPTURE(upper);
    auto cluster = make_cluster(links);
    cluster.network.switches_per_pod = 2;
    cluster.network.upper_oversubscription = upper;
    const auto topology = platform::build_topology(cluster, 16);
    REQUIRE(topology.fabric.levels == 3);
    CHECK(topology.fabric.upper_oversubscription() == upper);
    const double nic = links.nic_bandwidth.value(), lat = links.network_latency.value();
    // Every device sends to the device 4 further on (another pod): 4 flows leave each pod over
    // its aggregation switches' 2 x (2 / upper) uplinks of one NIC each.
    lowering::TaskGraph cross(16);
    for (lowering::DeviceId d = 0; d < 16; ++d) add_transfer(cross, d, (d + 4) % 16, units::bytes(size));
    const auto tc = engine::simulate(cross, topology);
    for (lowering::TaskId id = 0; id < 16; ++id) CHECK(duration_of(tc, id) == exactly(size / nic * upper + lat));
    // Every device sends to the device 2 further on within its pod (another leaf switch).
    lowering::TaskGraph within(16);
    for (lowering::DeviceId d = 0; d < 16; ++d) add_transfer(within, d, (d / 4) * 4 + (d + 2) % 4, units::bytes(size));
    const auto tw = engine::simulate(within, topology);
    for (lowering::TaskId id = 0; id < 16; ++id) CHECK(duration_of(tw, id) == exactly(size / nic + lat));
  }
}
