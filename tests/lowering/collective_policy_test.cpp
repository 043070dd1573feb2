// The algorithm each collective of an iteration runs (collective_policy.hpp): the group's
// placement on nodes, the policy per communication kind, and the automatic choice.
#include <doctest/doctest.h>

#include <vector>

#include <twocs/lowering/collective_policy.hpp>

#include "support/collective_networks.hpp"

using namespace twocs;
using lowering::Algorithm;
using lowering::CollectiveKind;
using testing::dgx_like;

namespace {

std::vector<lowering::DeviceId> strided(int first, int count, int stride) {
  std::vector<lowering::DeviceId> d;
  for (int i = 0; i < count; ++i) d.push_back(first + i * stride);
  return d;
}

} // namespace

TEST_CASE("a group's ranks per node come from where its members sit") {
  const auto net = dgx_like(0);
  CHECK(lowering::ranks_per_node(net, strided(0, 8, 1)) == 0);  // one node
  CHECK(lowering::ranks_per_node(net, strided(0, 4, 8)) == 1);  // a data group with t = 8: one per node
  CHECK(lowering::ranks_per_node(net, strided(0, 8, 2)) == 4);  // t = 2: four per node, two nodes
  CHECK(lowering::ranks_per_node(net, strided(6, 4, 3)) == 1);  // 6 | 9, 12, 15: irregular
  CHECK(lowering::ranks_per_node(net, strided(0, 12, 1)) == 1); // 8 + 4: irregular
  const auto shape = lowering::group_shape(net, strided(0, 8, 2));
  CHECK(shape.ranks == 8);
  CHECK(shape.ranks_per_node == 4);
  CHECK(shape.channels == 4); // one ring per NIC the group uses in a node
}

TEST_CASE("the policy's algorithm per kind, automatic resolves by size and placement, no network: ring") {
  const units::Bytes large = units::bytes(256.0 * 1024 * 1024);
  const auto node = strided(0, 8, 1);
  lowering::CollectivePolicy policy;
  CHECK(lowering::choose_collective(policy, model::CommGroup::tensor, CollectiveKind::all_reduce, large, node)
            .algorithm == Algorithm::ring);
  policy.network = dgx_like(0.85);
  // NVLS: S (1 + 1/n) / (0.85 B) against the ring's 2 (n - 1) / n S / B: 1.32 S/B < 1.75 S/B.
  const auto nvls =
      lowering::choose_collective(policy, model::CommGroup::tensor, CollectiveKind::all_reduce, large, node);
  CHECK(nvls.algorithm == Algorithm::in_network);
  CHECK(nvls.shape.in_network_efficiency == doctest::Approx(0.85));
  // An all-gather cannot use it.
  CHECK(lowering::choose_collective(policy, model::CommGroup::tensor, CollectiveKind::all_gather, large, node)
            .algorithm == Algorithm::ring);
  policy.algorithms[static_cast<std::size_t>(model::CommGroup::tensor)] = Algorithm::ring;
  CHECK(lowering::choose_collective(policy, model::CommGroup::tensor, CollectiveKind::all_reduce, large, node)
            .algorithm == Algorithm::ring);
  policy.algorithms[static_cast<std::size_t>(model::CommGroup::data)] = Algorithm::tree;
  CHECK(lowering::choose_collective(policy, model::CommGroup::data, CollectiveKind::all_reduce, large, strided(0, 4, 8))
            .algorithm == Algorithm::tree);
  CHECK(lowering::choose_collective(policy, model::CommGroup::data, CollectiveKind::send_recv, large, strided(0, 2, 8))
            .algorithm == Algorithm::ring);
}

TEST_CASE("across nodes automatic takes the tree for small all-reduces and the ring for large ones") {
  lowering::CollectivePolicy policy;
  policy.network = dgx_like(0);
  policy.automatic_tree = true;         // as collbench
  policy.protocols = true;              // as collbench
  const auto group = strided(0, 64, 8); // 64 nodes, one rank each
  // Ring: 2 x 63 latencies of 5 us = 630 us; tree: 2 log2(64) = 12 latencies = 60 us.
  CHECK(lowering::choose_collective(policy, model::CommGroup::data, CollectiveKind::all_reduce, units::bytes(1024.0),
                                    group)
            .algorithm == Algorithm::tree);
  // 8 GiB: the tree's busiest rank sends 2 S, the ring's 2 (n - 1) / n S: 2 S / n = 5.6 ms more,
  // against the Simple ring's NCCL latency of 8.4 + 126 x 14 us = 1.8 ms (tuning.cc; at 1 GiB the
  // tree's 0.7 ms less wins).
  CHECK(lowering::choose_collective(policy, model::CommGroup::data, CollectiveKind::all_reduce,
                                    units::bytes(8.0 * 1024 * 1024 * 1024), group)
            .algorithm == Algorithm::ring);
  policy.automatic_tree = false; // as `twocs run`: the tree only when named
  CHECK(lowering::choose_collective(policy, model::CommGroup::data, CollectiveKind::all_reduce, units::bytes(1024.0),
                                    group)
            .algorithm == Algorithm::ring);
}

TEST_CASE("with protocols on, a group gets NCCL's protocol within a node and across nodes, off none") {
  lowering::CollectivePolicy policy;
  policy.network = dgx_like(0);
  policy.protocols = false; // the what-if: every message at the link's full rate, no protocol latency
  const units::Bytes size = units::bytes(8.0 * 1024 * 1024);
  const auto off =
      lowering::choose_collective(policy, model::CommGroup::tensor, CollectiveKind::all_reduce, size, strided(0, 8, 1));
  CHECK(off.shape.protocol_latency_steps == 0);
  CHECK(off.shape.protocol_bandwidth_fraction == 1.0);
  policy.protocols = true;
  // 8 ranks at 370 GB/s, 2 us: LL128 (14 + 14 x 1.9 = 40.6 us) beats Simple (8.4 + 14 x 3.4 = 56 us)
  // at 8 MiB; 40.6 - 14 x 2 = 12.6 us beyond the messages' latencies: 6 of 2 us.
  const double w = 2.0 * 7 / 8 * size.value() / 370e9;
  REQUIRE(40.6e-6 + w / 0.92 < 56e-6 + w);
  const auto on =
      lowering::choose_collective(policy, model::CommGroup::tensor, CollectiveKind::all_reduce, size, strided(0, 8, 1));
  CHECK(on.shape.protocol_latency_steps == 6);
  CHECK(on.shape.protocol_bandwidth_fraction == doctest::Approx(0.92));
  // Across 4 nodes (one rank each, 48 GB/s, 5 us): 6 network steps. Simple 8.4 + 6 x 14 = 92.4 us,
  // LL128 14 + 6 x 4 = 38 us, LL 6.6 + 6 x 2.7 = 22.8 us, against the messages' own 6 x 5 = 30 us.
  const double w_net = 2.0 * 3 / 4 * size.value() / 48e9;
  const double simple = 92.4e-6 + w_net, ll128 = 38e-6 + w_net / 0.92, ll = 30e-6 + w_net / 0.5;
  REQUIRE(ll128 < simple);
  REQUIRE(ll128 < ll);
  const auto across =
      lowering::choose_collective(policy, model::CommGroup::data, CollectiveKind::all_reduce, size, strided(0, 4, 8));
  CHECK(across.shape.protocol_bandwidth_fraction == doctest::Approx(0.92));
  CHECK(across.shape.protocol_latency_steps == 2); // (38 - 30) / 5 = 1.6: two route latencies
}
