// A link's efficiency scales the bandwidth the simulated network sees (node.interconnect.
// efficiency, cluster.network.efficiency); 1 keeps the line rate.
#include <doctest/doctest.h>

#include <stdexcept>

#include <twocs/platform/topology.hpp>

using namespace twocs;

namespace {

hardware::ClusterSpec cluster(double node_efficiency, double network_efficiency) {
  hardware::ClusterSpec c;
  c.name = "test";
  c.nodes = 2;
  c.node.devices = 8;
  c.node.interconnect = {units::bytes_per_second(300e9), units::seconds(2e-6), node_efficiency};
  c.network.link = {units::bytes_per_second(25e9), units::seconds(5e-6), network_efficiency};
  return c;
}

} // namespace

TEST_CASE("link efficiencies scale the sustained bandwidth of device links and NICs, not latencies") {
  const auto full = platform::build_topology(cluster(1.0, 1.0), 16);
  const auto nccl = platform::build_topology(cluster(0.767, 0.9), 16);
  CHECK(nccl.route_bandwidth(0, 1).value() == doctest::Approx(0.767 * 300e9));
  CHECK(nccl.route_bandwidth(0, 8).value() == doctest::Approx(0.9 * 25e9));
  CHECK(full.route_bandwidth(0, 1).value() == doctest::Approx(300e9));
  CHECK(nccl.route_latency(0, 1) == full.route_latency(0, 1));
  CHECK(nccl.route_latency(0, 8) == full.route_latency(0, 8));
  // The fabric above the NICs keeps its line rate: it is never the narrower link.
  CHECK(nccl.fabric_link.bandwidth == full.fabric_link.bandwidth);
}

TEST_CASE("an efficiency of 0 or above 1 is rejected") {
  CHECK_THROWS_AS((void)platform::build_topology(cluster(0.0, 1.0), 16), std::invalid_argument);
  CHECK_THROWS_AS((void)platform::build_topology(cluster(1.0, 1.5), 16), std::invalid_argument);
}
