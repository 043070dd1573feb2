// ECMP on a fat tree: each flow hashed onto one of the equal-cost uplinks. Two flows hashed onto
// one uplink each take twice as long; over many random placements the mean throughput is the
// balls-in-bins expectation (docs/network.md, ECMP).
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <optional>
#include <set>

#include "engine_test_support.hpp"

using namespace twocs;
using namespace twocs::engine::test;

namespace {

constexpr double size = 100e6;
constexpr double nic = 25e9, latency = 5e-6;
constexpr std::int64_t leaf = 8; // nodes per leaf switch, and uplinks per leaf (non-blocking)

// 16 nodes of one device under two leaf switches of 8, 8 spine switches, ECMP routing.
platform::Topology ecmp_tree(std::uint64_t seed) {
  ClusterLinks links;
  links.nodes = 16;
  links.devices_per_node = 1;
  links.nodes_per_switch = leaf;
  auto cluster = make_cluster(links);
  cluster.network.routing = hardware::Routing::ecmp;
  cluster.network.ecmp_seed = seed;
  return platform::build_topology(cluster, cluster.device_count());
}

/// The uplink a flow climbs: the third link of its route (NIC, leaf port, uplink, ...).
std::int64_t uplink(const platform::Topology& t, std::int64_t a, std::int64_t b) {
  const auto route = t.route(a, b);
  REQUIRE(route.size() == 6);
  return route[2].link;
}

} // namespace

TEST_CASE("ECMP routes each flow over one of the leaf's p uplinks, the same one every time") {
  const auto t = ecmp_tree(0);
  REQUIRE(t.is_routed());
  CHECK(t.routed.p1 == leaf);
  std::set<std::int64_t> used;
  for (std::int64_t a = 0; a < leaf; ++a)
    for (std::int64_t b = leaf; b < 2 * leaf; ++b) {
      CHECK(uplink(t, a, b) == uplink(t, a, b));
      used.insert(uplink(t, a, b)); // leaf 0's uplinks
    }
  CHECK(used.size() == static_cast<std::size_t>(leaf)); // 64 flows reach every uplink
  CHECK(platform::ecmp_hash(1, 2, 0, 0) != platform::ecmp_hash(2, 1, 0, 0));
  CHECK(platform::ecmp_hash(1, 2, 0, 0) != platform::ecmp_hash(1, 2, 1, 0));
  CHECK(platform::ecmp_hash(1, 2, 0, 0) != platform::ecmp_hash(1, 2, 0, 1));
}

TEST_CASE("two flows hashed onto one uplink each take twice as long, on two uplinks, as alone") {
  const auto t = ecmp_tree(0);
  // Find, among flows from distinct sources to distinct destinations, a colliding and a
  // separate pair (the NICs are never shared, so only the uplink can slow them).
  std::optional<std::array<std::int64_t, 4>> same, apart;
  for (std::int64_t b = leaf + 1; b < 2 * leaf; ++b)
    for (std::int64_t c = 1; c < leaf; ++c) {
      const bool collide = uplink(t, 0, leaf) == uplink(t, c, b);
      (collide ? same : apart) = std::array<std::int64_t, 4>{0, leaf, c, b};
    }
  REQUIRE(same.has_value());
  REQUIRE(apart.has_value());
  for (const auto& [pair, factor] : {std::pair{*same, 2.0}, std::pair{*apart, 1.0}}) {
    lowering::TaskGraph graph(16);
    const auto x = add_transfer(graph, pair[0], pair[1], units::bytes(size));
    const auto y = add_transfer(graph, pair[2], pair[3], units::bytes(size));
    const auto timeline = engine::simulate(graph, t);
    CHECK(duration_of(timeline, x) == exactly(factor * size / nic + latency));
    CHECK(duration_of(timeline, y) == exactly(factor * size / nic + latency));
  }
}

TEST_CASE("over many hashings the mean throughput of n flows on p uplinks is B p (1 - (1 - 1/p)^n) / n") {
  // n = 8 flows from leaf 0 to leaf 1 (node i to node 8 + i), p = 8 uplinks. A flow sharing its
  // uplink (and so the spine's downlink) with c - 1 others gets B / c: a trial's mean throughput
  // is B x (uplinks used) / n, and over uniform hashing the expected number of bins used is
  // p (1 - (1 - 1/p)^n) (balls in bins).
  constexpr int trials = 64;
  constexpr double n = leaf, p = leaf;
  double sum = 0;
  for (std::uint64_t seed = 0; seed < trials; ++seed) {
    const auto t = ecmp_tree(seed);
    lowering::TaskGraph graph(16);
    std::set<std::int64_t> bins;
    for (std::int64_t i = 0; i < leaf; ++i) {
      add_transfer(graph, i, leaf + i, units::bytes(size));
      bins.insert(uplink(t, i, leaf + i));
    }
    const auto timeline = engine::simulate(graph, t);
    double throughput = 0;
    for (lowering::TaskId id = 0; id < static_cast<lowering::TaskId>(leaf); ++id)
      throughput += size / (duration_of(timeline, id) - latency) / static_cast<double>(leaf);
    CHECK(throughput == doctest::Approx(nic * static_cast<double>(bins.size()) / n).epsilon(1e-9));
    sum += throughput;
  }
  const double expected = nic * p * (1 - std::pow(1 - 1 / p, n)) / n; // 0.656 B
  // Standard deviation of one trial's mean ~0.11 B, of the average over 64 trials ~0.014 B.
  CHECK(sum / trials == doctest::Approx(expected).epsilon(0.05));
  CHECK(sum / trials < 0.75 * nic); // collisions cost about a third of the bandwidth
}
