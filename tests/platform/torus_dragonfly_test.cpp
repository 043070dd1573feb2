// Tori (dimension-order routing, wraparound links) and dragonflies (groups of routers, all-to-all
// local and global links, minimal routing): hop counts and bisections against closed forms.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include <twocs/hardware/cluster.hpp>
#include <twocs/platform/topology.hpp>

using namespace twocs;
using doctest::Approx;

namespace {

hardware::ClusterSpec cluster(std::int64_t nodes, hardware::NetworkTopology topology) {
  hardware::ClusterSpec c;
  c.name = "direct";
  c.nodes = nodes;
  c.node.devices = 1;
  c.node.interconnect = {units::bytes_per_second(300e9), units::seconds(1e-6)};
  c.network.topology = topology;
  c.network.link = {units::bytes_per_second(100e9), units::seconds(2e-6)};
  return c;
}

platform::Topology torus(std::vector<std::int64_t> dims) {
  std::int64_t n = 1;
  for (const auto d : dims) n *= d;
  auto c = cluster(n, hardware::NetworkTopology::torus);
  c.network.torus_dimensions = std::move(dims);
  c.network.hop_latency = units::seconds(0.1e-6);
  return platform::build_topology(c, n);
}

std::int64_t fabric_hops(const platform::Topology& t, std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(t.route(a, b).size()) - 2; // less the two NICs
}

// Dragonfly of 4 routers per group, 2 nodes per router: 8 nodes per group.
platform::Topology dragonfly(std::int64_t groups) {
  auto c = cluster(groups * 8, hardware::NetworkTopology::dragonfly);
  c.network.nodes_per_switch = 2;
  c.network.switches_per_group = 4;
  return platform::build_topology(c, c.nodes);
}

} // namespace

TEST_CASE("a torus route crosses sum over dimensions of min(|dx|, n - |dx|) links") {
  for (const auto& dims : {std::vector<std::int64_t>{8}, {4, 6}, {4, 4, 4}, {3, 2, 5}}) {
    const auto t = torus(dims);
    REQUIRE(t.is_routed());
    std::int64_t worst = 0;
    for (std::int64_t a = 0; a < t.devices; ++a)
      for (std::int64_t b = 0; b < t.devices; ++b) {
        if (a == b) continue;
        std::int64_t expected = 0, stride = 1;
        for (const auto n : dims) {
          const std::int64_t d = std::abs((a / stride) % n - (b / stride) % n);
          expected += std::min(d, n - d);
          stride *= n;
        }
        CHECK(fabric_hops(t, a, b) == expected);
        worst = std::max(worst, expected);
      }
    // The diameter: sum of floor(n / 2).
    std::int64_t diameter = 0;
    for (const auto n : dims) diameter += n / 2;
    CHECK(worst == diameter);
  }
}

TEST_CASE("a torus route corrects x, then y, then z, and pays hop_latency per link") {
  const auto t = torus({4, 4, 4});
  // (1, 0, 0) -> (3, 2, 1): x two steps forward, y two steps (a tie: forward), z one step.
  const auto route = t.route(1, 3 + 2 * 4 + 1 * 16);
  REQUIRE(route.size() == 7);
  const std::int64_t base = t.nic_link_index(t.nodes, 0); // fabric link node * 3 + dimension
  for (std::size_t i = 1; i <= 4; ++i) CHECK((route[i].link - base) % 3 == (i <= 2 ? 0 : 1));
  CHECK((route[5].link - base) % 3 == 2);
  CHECK(t.route_latency(1, 3 + 2 * 4 + 16).value() == Approx(2e-6 + 5 * 0.1e-6));
  // Node 2 -> node 1: x one step backward, over node 1's x link in its other direction.
  const auto back = t.route(2, 1);
  REQUIRE(back.size() == 3);
  CHECK(back[1].link == base + 1 * 3 + 0);
  CHECK_FALSE(back[1].up);
}

TEST_CASE("the bisection of a torus is 2 N / n links across its longest dimension") {
  for (const auto& dims : {std::vector<std::int64_t>{8, 4}, {4, 4, 4}, {16, 16}}) {
    const auto t = torus(dims);
    const std::int64_t n = dims[0], nodes = t.devices; // dims[0] is the longest here
    std::int64_t cut = 0;
    for (std::int64_t id = 0; id < t.routed.link_count(); ++id) {
      const auto [a, b] = t.routed.link_ends(id);
      cut += ((a % n) < n / 2) != ((b % n) < n / 2) ? 1 : 0;
    }
    CHECK(cut == 2 * nodes / n);
    CHECK(t.routed.link_count() == nodes * static_cast<std::int64_t>(dims.size()));
  }
}

TEST_CASE("a dragonfly routes minimally: at most local, global, local") {
  const auto t = dragonfly(9); // 9 groups = a h + 1 with h = 2 global links per router
  REQUIRE(t.is_routed());
  CHECK(t.routed.groups == 9);
  CHECK(t.routed.link_count() == 9 * 6 + 9 * 8 / 2);
  const std::int64_t locals = 9 * 6;
  std::int64_t worst = 0;
  for (std::int64_t a = 0; a < t.devices; ++a)
    for (std::int64_t b = 0; b < t.devices; ++b) {
      if (a == b) continue;
      const auto route = t.route(a, b);
      std::int64_t global = 0;
      for (std::size_t i = 1; i + 1 < route.size(); ++i)
        global += route[i].link - t.nic_link_index(t.nodes, 0) >= locals ? 1 : 0;
      const bool same_router = a / 2 == b / 2, same_group = a / 8 == b / 8;
      CHECK(global == (same_group ? 0 : 1));
      if (same_router)
        CHECK(fabric_hops(t, a, b) == 0);
      else if (same_group)
        CHECK(fabric_hops(t, a, b) == 1);
      worst = std::max(worst, fabric_hops(t, a, b));
    }
  CHECK(worst == 3);
}

TEST_CASE("every dragonfly router holds its share of global links, the bisection cuts (g/2)^2 of them") {
  const auto t = dragonfly(9);
  std::map<std::int64_t, int> global_ends;
  const std::int64_t locals = 9 * 6;
  for (std::int64_t id = locals; id < t.routed.link_count(); ++id) {
    const auto [a, b] = t.routed.link_ends(id);
    CHECK(a / 4 != b / 4); // a global link joins two groups
    ++global_ends[a];
    ++global_ends[b];
  }
  CHECK(global_ends.size() == 36);
  for (const auto& [router, count] : global_ends) CHECK(count == 2); // (g - 1) / a = 8 / 4
  const auto even = dragonfly(8);
  std::int64_t cut = 0;
  for (std::int64_t id = 0; id < even.routed.link_count(); ++id) {
    const auto [a, b] = even.routed.link_ends(id);
    cut += (a / 4 < 4) != (b / 4 < 4) ? 1 : 0;
  }
  CHECK(cut == 4 * 4);
}
