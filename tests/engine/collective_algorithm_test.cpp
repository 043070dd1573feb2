// Each collective algorithm simulated on an idle network against its closed form, computed here
// from the links (docs/network.md gives the formulas).
#include <doctest/doctest.h>

#include <numeric>

#include <twocs/lowering/collective_algorithm_lowering.hpp>

#include "engine_test_support.hpp"

using namespace twocs;
using namespace twocs::engine::test;
using lowering::Algorithm;
using lowering::CollectiveKind;

namespace {

constexpr double S = 256e6; // bytes

/// The makespan of `algorithm` over the first `n` devices of `topology`.
double simulate_collective(const platform::Topology& topology, Algorithm algorithm, CollectiveKind kind, double size,
                           std::int32_t n, lowering::ScheduleShape shape = {}) {
  shape.ranks = n;
  const auto schedule = lowering::make_schedule(algorithm, kind, units::bytes(size), shape);
  REQUIRE(schedule.algorithm == algorithm);
  lowering::TaskGraph graph(n);
  lowering::Transfer prototype;
  prototype.group = model::CommGroup::data;
  std::vector<lowering::DeviceId> devices(static_cast<std::size_t>(n));
  std::iota(devices.begin(), devices.end(), 0);
  (void)lowering::add_schedule(graph, schedule, devices, lowering::TaskTag{}, prototype);
  return engine::simulate(graph, topology).makespan.value();
}

/// The links' rates: node bandwidth and latency, NIC bandwidth and network latency.
struct Rates {
  double bn, ln, bnic, lnet;
};
Rates rates_of(const ClusterLinks& links) {
  return {links.node_bandwidth.value(), links.node_latency.value(), links.nic_bandwidth.value(),
          links.network_latency.value()};
}

/// Nodes of `g` ranks whose switch reduces at NVLS's Hopper efficiency (0.85).
lowering::ScheduleShape nvls_nodes_of(std::int32_t g) {
  lowering::ScheduleShape shape;
  shape.ranks_per_node = g;
  shape.in_network_efficiency = 0.85;
  return shape;
}

ClusterLinks one_node(std::int64_t devices) {
  ClusterLinks links;
  links.nodes = 1;
  links.devices_per_node = devices;
  return links;
}

} // namespace

TEST_CASE("ring all-reduce: 2 (n - 1) steps of S / n") {
  const auto links = one_node(8);
  const double b = links.node_bandwidth.value(), l = links.node_latency.value();
  CHECK(simulate_collective(make_topology(links), Algorithm::ring, CollectiveKind::all_reduce, S, 8) ==
        exactly(14 * (S / 8 / b + l)));
}

TEST_CASE("double binary tree all-reduce of two ranks: up then down, half the buffer per tree") {
  const auto links = one_node(2);
  const double b = links.node_bandwidth.value(), l = links.node_latency.value();
  CHECK(simulate_collective(make_topology(links), Algorithm::tree, CollectiveKind::all_reduce, S, 2) ==
        exactly(2 * (S / 2 / b + l)));
}

TEST_CASE("halving-doubling all-reduce: 2 log2 n steps, 2 (n - 1) / n S per rank") {
  const auto links = one_node(8);
  const double b = links.node_bandwidth.value(), l = links.node_latency.value();
  CHECK(simulate_collective(make_topology(links), Algorithm::halving_doubling, CollectiveKind::all_reduce, S, 8) ==
        exactly(2 * (S / 2 + S / 4 + S / 8) / b + 6 * l));
}

TEST_CASE("in-network all-reduce: each rank moves S (1 + 1/n) once, over the efficiency") {
  const auto links = one_node(8);
  const double b = links.node_bandwidth.value(), l = links.node_latency.value();
  lowering::ScheduleShape shape;
  shape.in_network_efficiency = 0.85;
  CHECK(simulate_collective(make_topology(links), Algorithm::in_network, CollectiveKind::all_reduce, S, 8, shape) ==
        doctest::Approx(S * (1.0 + 1.0 / 8) / 0.85 / b + l).epsilon(1e-8)); // a fractional byte count: SimGrid
                                                                            // rounds to ~1e-9 relative
}

TEST_CASE("in-network all-reduce over 72 ranks: 32 heads, each head's link moves S (1 + 1/32)") {
  // NCCL's NVLS has at most 32 heads (NCCL_MAX_NVLS_ARITY): a full NVL72 rack reduces through 32.
  const auto links = one_node(72);
  const double b = links.node_bandwidth.value(), l = links.node_latency.value();
  lowering::ScheduleShape shape;
  shape.in_network_efficiency = 0.74;
  const double heads = 32;
  CHECK(simulate_collective(make_topology(links), Algorithm::in_network, CollectiveKind::all_reduce, S, 72, shape) ==
        doctest::Approx(S * (1.0 + 1.0 / heads) / 0.74 / b + l).epsilon(1e-8));
}

TEST_CASE("direct all-reduce on a mesh uses every link at once") {
  auto links = one_node(4);
  auto cluster = make_cluster(links);
  cluster.node.topology = hardware::NodeTopology::mesh;
  const auto topology = platform::build_topology(cluster, 4);
  const double pair = links.node_bandwidth.value() / 3, l = links.node_latency.value();
  CHECK(topology.device_link.bandwidth.value() == doctest::Approx(pair));
  CHECK(simulate_collective(topology, Algorithm::direct, CollectiveKind::all_reduce, S, 4) ==
        exactly(2 * (S / 4 / pair + l)));
  // A ring on the mesh uses one link per rank: n - 1 times slower in bandwidth.
  CHECK(simulate_collective(topology, Algorithm::ring, CollectiveKind::all_reduce, S, 4) ==
        exactly(6 * (S / 4 / pair + l)));
}

TEST_CASE("direct all-to-all: every pair at once, S / n each") {
  const auto links = one_node(4);
  const double b = links.node_bandwidth.value(), l = links.node_latency.value();
  // Each rank's link up carries 3 messages of S / 4 at once.
  CHECK(simulate_collective(make_topology(links), Algorithm::direct, CollectiveKind::all_to_all, S, 4) ==
        exactly(3 * S / 4 / b + l));
  CHECK(simulate_collective(make_topology(links), Algorithm::pairwise, CollectiveKind::all_to_all, S, 4) ==
        exactly(3 * (S / 4 / b + l)));
}

TEST_CASE("a chunked broadcast chain approaches S / B instead of (n - 1) S / B") {
  const auto links = one_node(8);
  const double b = links.node_bandwidth.value(), l = links.node_latency.value();
  const auto topology = make_topology(links);
  lowering::ScheduleShape shape;
  CHECK(simulate_collective(topology, Algorithm::ring, CollectiveKind::broadcast, S, 8, shape) ==
        exactly(7 * (S / b + l)));
  shape.chunks = 64; // (n - 1 + k - 1) slices of S / k
  const double chunked = simulate_collective(topology, Algorithm::ring, CollectiveKind::broadcast, S, 8, shape);
  CHECK(chunked == exactly(70 * (S / 64 / b + l)));
  CHECK(chunked < 1.1 * (S / b + 70 * l));
}

TEST_CASE("hierarchical all-reduce beats a flat ring across nodes for large messages") {
  ClusterLinks links; // 2 nodes x 4 devices, NVLink 300 GB/s, NIC 25 GB/s
  const auto topology = make_topology(links);
  const double bn = links.node_bandwidth.value(), ln = links.node_latency.value();
  const double bnic = links.nic_bandwidth.value(), lnet = links.network_latency.value();
  lowering::ScheduleShape shape;
  shape.ranks_per_node = 4;
  const double hierarchical =
      simulate_collective(topology, Algorithm::hierarchical, CollectiveKind::all_reduce, S, 8, shape);
  // Reduce-scatter in the node (3 steps of S/4), all-reduce of S/4 between the nodes (4 rings of
  // 2 ranks, one per NIC: 2 steps of S/8), all-gather in the node.
  CHECK(hierarchical == exactly(6 * (S / 4 / bn + ln) + 2 * (S / 8 / bnic + lnet)));
  shape.channels = 4; // one ring per NIC, as NCCL
  const double flat = simulate_collective(topology, Algorithm::ring, CollectiveKind::all_reduce, S, 8, shape);
  CHECK(hierarchical < flat);
}

TEST_CASE("SHARP across nodes: each head's share S / g once up its NIC and once down, with NVLS inside") {
  ClusterLinks links; // 4 devices a node, NVLink 300 GB/s, NIC 25 GB/s
  links.nodes = 4;
  const auto [bn, ln, bnic, lnet] = rates_of(links);
  auto shape = nvls_nodes_of(4);
  shape.network_in_network_efficiency = 0.8;
  // NVLS inside each node (S (1 + 1/4) / 0.85 per rank) and each rank's quarter through the
  // network's switches (S / 4 / 0.8 per NIC), at once: the slower of the two.
  const double nvls = S * (1.0 + 1.0 / 4) / 0.85 / bn + ln;
  const double sharp = S / 4 / 0.8 / bnic + lnet;
  CHECK(simulate_collective(make_topology(links), Algorithm::in_network, CollectiveKind::all_reduce, S, 16, shape) ==
        doctest::Approx(std::max(nvls, sharp)).epsilon(1e-8));
  // One rank per node: no NVLS, the network's switches alone.
  lowering::ScheduleShape one = shape;
  one.ranks_per_node = 1;
  one.node_in_network = false;
  ClusterLinks single = links;
  single.devices_per_node = 1;
  CHECK(simulate_collective(make_topology(single), Algorithm::in_network, CollectiveKind::all_reduce, S, 4, one) ==
        doctest::Approx(S / 0.8 / bnic + lnet).epsilon(1e-8));
  // Without SHARP in the network it does not apply across nodes, and falls back to the ring.
  shape.network_in_network_efficiency = 0;
  CHECK(lowering::scheduled_algorithm(Algorithm::in_network, CollectiveKind::all_reduce, [&] {
          auto s = shape;
          s.ranks = 16;
          return s;
        }()) == Algorithm::ring);
}

TEST_CASE("NVLS_TREE: NVLS inside each node and a tree of each head's share between nodes") {
  const ClusterLinks links; // 2 nodes x 4 devices
  const auto [bn, ln, bnic, lnet] = rates_of(links);
  const auto shape = nvls_nodes_of(4);
  // Two nodes: the tree of each head's S / 4 is a chain of two, up and down one link per half
  // (the two trees run opposite ways): S / 4 / 2 each way per tree, S / 4 on each NIC each way.
  const double nvls = S * (1.0 + 1.0 / 4) / 0.85 / bn + ln;
  const double tree = S / 4 / bnic + 2 * lnet; // one slice up, one down (no slicing: slice_bytes 0)
  CHECK(simulate_collective(make_topology(links), Algorithm::in_network_tree, CollectiveKind::all_reduce, S, 8,
                            shape) == doctest::Approx(std::max(nvls, tree)).epsilon(1e-6));
}
