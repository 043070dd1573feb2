// Property: over random sizes, group sizes and topologies, no simulated collective beats its
// bandwidth bound: the bytes each device must send over all its links at once (with in-network
// reduction, the bytes it sends once).
#include <doctest/doctest.h>

#include <numeric>
#include <random>

#include <twocs/lowering/collective_algorithm_lowering.hpp>
#include <twocs/platform/collective_context.hpp>

#include "engine_test_support.hpp"

using namespace twocs;
using namespace twocs::engine::test;
using lowering::Algorithm;
using lowering::CollectiveKind;

TEST_CASE("no collective beats its bandwidth bound") {
  std::mt19937 random(20261201); // fixed: the test is deterministic
  const Algorithm algorithms[] = {Algorithm::ring,         Algorithm::tree,       Algorithm::halving_doubling,
                                  Algorithm::hierarchical, Algorithm::in_network, Algorithm::direct};
  const CollectiveKind kinds[] = {CollectiveKind::all_reduce, CollectiveKind::reduce_scatter,
                                  CollectiveKind::all_gather, CollectiveKind::all_to_all, CollectiveKind::broadcast};
  const hardware::NodeTopology nodes[] = {hardware::NodeTopology::switch_, hardware::NodeTopology::mesh,
                                          hardware::NodeTopology::ring, hardware::NodeTopology::pcie};
  for (int trial = 0; trial < 60; ++trial) {
    ClusterLinks links;
    links.devices_per_node = std::uniform_int_distribution<std::int64_t>(1, 4)(random);
    links.nodes = std::uniform_int_distribution<std::int64_t>(1, 3)(random);
    links.oversubscription = trial % 3 == 0 ? 2.0 : 1.0;
    links.nodes_per_switch = 2;
    auto cluster = make_cluster(links);
    cluster.node.topology = nodes[trial % 4];
    cluster.node.in_network_efficiency = 0.85;
    const auto n = static_cast<std::int32_t>(
        std::uniform_int_distribution<std::int64_t>(2, std::max<std::int64_t>(2, cluster.device_count()))(random));
    if (n > cluster.device_count()) continue;
    const auto topology = platform::build_topology(cluster, n);
    const double size = std::uniform_real_distribution<double>(1e3, 1e8)(random);
    const Algorithm algorithm = algorithms[trial % 6];
    const CollectiveKind kind = kinds[(trial / 6) % 5];
    CAPTURE(trial);
    CAPTURE(n);
    CAPTURE(size);
    CAPTURE(lowering::to_string(algorithm));
    CAPTURE(lowering::to_string(kind));
    auto shape = platform::schedule_shape(topology, n);
    shape.chunks = 1 + trial % 3;
    const auto schedule = lowering::make_schedule(algorithm, kind, units::bytes(size), shape);
    lowering::TaskGraph graph(n);
    std::vector<lowering::DeviceId> devices(static_cast<std::size_t>(n));
    std::iota(devices.begin(), devices.end(), 0);
    (void)lowering::add_schedule(graph, schedule, devices, lowering::TaskTag{}, lowering::Transfer{});
    const double time = engine::simulate(graph, topology).makespan.value();
    // A device sends over its node links and its NIC at most at their sum.
    const auto context = platform::collective_context(topology, n);
    const double out = context.intra_bandwidth.value() + topology.nic_link.bandwidth.value();
    const double bound = lowering::bytes_each_rank_sends(kind, schedule.algorithm, units::bytes(size), n).value() / out;
    CHECK(time >= bound * (1 - 1e-9));
  }
}
