// Building the routed networks at 2048 nodes of 8 devices (docs/network.md, "Build cost"): the
// devices a folded run of the default scenario uses (its first two nodes and the last), and
// every device (skipped in the suite: run with --no-skip). The engine builds only what the task
// graph uses, so a graph of a few one-byte transfers times the build (their simulation is
// negligible). Times are reported, not asserted (machines differ).
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include "engine_test_support.hpp"

using namespace twocs;
using namespace twocs::engine::test;

namespace {

struct Case {
  std::string name;
  hardware::NetworkTopology topology;
  hardware::Routing routing = hardware::Routing::ideal;
};

const std::vector<Case> cases = {
    {"fat-tree, ideal (SimGrid zone)", hardware::NetworkTopology::fat_tree},
    {"fat-tree, ecmp", hardware::NetworkTopology::fat_tree, hardware::Routing::ecmp},
    {"rail-fat-tree, ideal", hardware::NetworkTopology::rail_fat_tree},
    {"rail-fat-tree, ecmp", hardware::NetworkTopology::rail_fat_tree, hardware::Routing::ecmp},
    {"torus 16 x 16 x 8", hardware::NetworkTopology::torus},
    {"dragonfly 32 groups", hardware::NetworkTopology::dragonfly},
};

platform::Topology large(const Case& c) {
  ClusterLinks links;
  links.nodes = 2048;
  links.devices_per_node = 8;
  auto cluster = make_cluster(links);
  // Three levels: leaf switches of 32 nodes, pods of 16 groups (512 nodes; rails: 128 leaf switches).
  cluster.network.switches_per_pod = 16;
  cluster.network.topology = c.topology;
  cluster.network.routing = c.routing;
  cluster.network.torus_dimensions = {16, 16, 8};
  cluster.network.nodes_per_switch = c.topology == hardware::NetworkTopology::dragonfly ? 4 : 32;
  cluster.network.switches_per_group = 16;
  return platform::build_topology(cluster, cluster.device_count());
}

/// Wall time of simulating one-byte transfers along `path`, one after the other.
double build_seconds(const platform::Topology& t, const std::vector<lowering::DeviceId>& path) {
  lowering::TaskGraph graph(t.devices);
  for (std::size_t i = 0; i + 1 < path.size(); ++i) {
    const auto id = add_transfer(graph, path[i], path[i + 1], units::bytes(1));
    if (i > 0) graph.add_dependency(id - 1, id);
  }
  const auto begin = std::chrono::steady_clock::now();
  const auto timeline = engine::simulate(graph, t);
  const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - begin;
  CHECK(timeline.tasks.size() == path.size() - 1);
  return wall.count();
}

} // namespace

TEST_CASE("routed networks of 2048 nodes build what a folded run uses in a fraction of a second") {
  for (const Case& c : cases) {
    const auto t = large(c);
    // Device 0, its tensor peers, its data-parallel successor (node 1) and predecessor (last node).
    std::vector<lowering::DeviceId> path;
    for (lowering::DeviceId d = 0; d < 16; ++d) path.push_back(d);
    path.push_back(static_cast<lowering::DeviceId>(t.devices - 8));
    MESSAGE(c.name, ": ", t.link_count(), " links, folded platform built in ", build_seconds(t, path), " s");
  }
}

TEST_CASE("routed networks of 2048 nodes with every device used" * doctest::skip()) {
  for (const Case& c : cases) {
    const auto t = large(c);
    std::vector<lowering::DeviceId> path(static_cast<std::size_t>(t.devices));
    for (std::size_t d = 0; d < path.size(); ++d) path[d] = static_cast<lowering::DeviceId>(d);
    MESSAGE(c.name, ": every device's platform built (and ", path.size() - 1, " transfers run) in ",
            build_seconds(t, path), " s");
  }
}
