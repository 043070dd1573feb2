// Tori and dragonflies simulated: neighbour traffic runs at a link's bandwidth, traffic across
// the torus's bisection shares its links, flows between two dragonfly groups share one global link.
#include <doctest/doctest.h>

#include "engine_test_support.hpp"

using namespace twocs;
using namespace twocs::engine::test;

namespace {

constexpr double size = 100e6, nic = 25e9, link = 10e9, latency = 5e-6;

hardware::ClusterSpec direct(std::int64_t nodes, hardware::NetworkTopology topology) {
  ClusterLinks links;
  links.nodes = nodes;
  links.devices_per_node = 1;
  auto c = make_cluster(links);
  c.network.topology = topology;
  c.network.fabric_bandwidth = units::bytes_per_second(link);
  return c;
}

} // namespace

TEST_CASE("on an 8 x 2 torus every node sending half way round x loads each x link with 4 flows") {
  auto c = direct(16, hardware::NetworkTopology::torus);
  c.network.torus_dimensions = {8, 2};
  const auto t = platform::build_topology(c, 16);
  lowering::TaskGraph neighbours(16), half(16);
  for (lowering::DeviceId d = 0; d < 16; ++d) {
    const lowering::DeviceId x = d % 8, y = d / 8;
    add_transfer(neighbours, d, (x + 1) % 8 + 8 * y, units::bytes(size));
    add_transfer(half, d, (x + 4) % 8 + 8 * y, units::bytes(size));
  }
  const auto one = engine::simulate(neighbours, t);
  CHECK(one.makespan.value() == exactly(size / link + latency));
  // Distance 4 of 8 is a tie: every flow goes forward over 4 links, 16 x 4 link-hops over the
  // 16 forward x links: (n / 2) S / B each.
  const auto four = engine::simulate(half, t);
  CHECK(four.makespan.value() == exactly(4 * size / link + latency));
}

TEST_CASE("two flows between the same two dragonfly groups share their one global link") {
  auto c = direct(16, hardware::NetworkTopology::dragonfly);
  c.network.nodes_per_switch = 1;
  c.network.switches_per_group = 4; // 4 groups of 4 routers of one node
  const auto t = platform::build_topology(c, 16);
  lowering::TaskGraph graph(16);
  const auto a = add_transfer(graph, 0, 4, units::bytes(size));
  const auto b = add_transfer(graph, 1, 5, units::bytes(size));
  const auto timeline = engine::simulate(graph, t);
  CHECK(duration_of(timeline, a) == exactly(2 * size / link + latency));
  CHECK(duration_of(timeline, b) == exactly(2 * size / link + latency));
  lowering::TaskGraph alone(16);
  const auto c0 = add_transfer(alone, 0, 4, units::bytes(size));
  CHECK(duration_of(engine::simulate(alone, t), c0) == exactly(size / link + latency));
}
