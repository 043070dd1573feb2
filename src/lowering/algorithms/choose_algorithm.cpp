#include <algorithm>
#include <cmath>
#include <vector>

#include <twocs/lowering/collective_algorithm_choice.hpp>
#include <twocs/lowering/collective_protocol.hpp>

#include "schedule_builder.hpp"

namespace twocs::lowering {
namespace {

double log2_ceil(std::int32_t n) { return std::ceil(std::log2(static_cast<double>(std::max(n, 1)))); }

bool spans_nodes(const CollectiveContext& c) { return c.ranks_per_node > 0 && c.ranks_per_node < c.ranks; }

/// Ring of n ranks over a link of `bandwidth`: `steps` latencies plus the bytes each rank sends.
double ring_time(double steps, double latency, double bytes_per_rank, double bandwidth) {
  return steps * latency + bytes_per_rank / bandwidth;
}

double step_factor(CollectiveKind kind) { return kind == CollectiveKind::all_reduce ? 2.0 : 1.0; }

/// A group's shape and links, as the estimates read them.
struct Terms {
  double n, g, m;         // ranks, ranks per node, nodes (one node: g = n, m = 1)
  bool multi;             // spans nodes
  double b_intra, b_pair; // a rank's node links together, one pair's
  double b_ring;          // a multi-node ring: the narrower of a pair's link and the node's NICs per rank
  double b_nic;           // a rank's share of the network
  double l_intra, l_net;
};

Terms terms_of(const CollectiveContext& c) {
  Terms t{};
  t.n = c.ranks;
  t.multi = spans_nodes(c);
  t.g = t.multi ? c.ranks_per_node : t.n;
  t.m = t.multi ? t.n / t.g : 1.0;
  t.b_intra = c.intra_bandwidth.value();
  t.b_pair = c.intra_pair_bandwidth.value() > 0 ? c.intra_pair_bandwidth.value() : t.b_intra;
  // A multi-node ring leaves each node through one NIC per channel; with one channel per local
  // rank every NIC carries one ring (NCCL's rings), so the node's NICs add up.
  t.b_nic = c.inter_bandwidth.value();
  t.b_ring = t.multi ? std::min(t.b_pair, t.b_nic * t.g) : t.b_pair;
  t.l_intra = c.intra_latency.value();
  t.l_net = t.multi ? c.inter_latency.value() : t.l_intra;
  return t;
}

// NCCL's tuner counts the tree at 0.92 of its bandwidth (src/graph/tuning.cc, tree all-reduce busBw * .92).
constexpr double nccl_tree_efficiency = 0.92;

/// NCCL's tree between nodes of `s` bytes over a node's NICs: each NIC carries 2 s / g (an inner
/// node of one tree is a leaf of the other), s / g between two nodes.
double tree_nic_time(double s, const Terms& t) {
  return t.multi ? (t.m == 2 ? 1.0 : 2.0) * s / (t.b_nic * t.g) / nccl_tree_efficiency : 0.0;
}

double tree_time(double s, const Terms& t) {
  // A chain rank sends S each way per tree (2 S on its links).
  const double chain = t.g > 1 ? 2 * s / t.b_pair / nccl_tree_efficiency : 0.0;
  return 2 * ((t.g - 1) * t.l_intra + log2_ceil(static_cast<std::int32_t>(t.m)) * t.l_net) +
         std::max(tree_nic_time(s, t), chain);
}

/// NVLS inside each node: S (1 + 1/h) on a head's node link, h = min(g, 32) (in_network.cpp).
double nvls_time(double s, const Terms& t, const CollectiveContext& c) {
  const double h = nvls_heads(static_cast<std::int32_t>(t.g));
  return t.g > 1 ? s * (1 + 1 / h) / (c.in_network_efficiency * t.b_intra) : 0.0;
}

double in_network_time(double s, const Terms& t, const CollectiveContext& c) {
  if (!t.multi) return t.l_intra + nvls_time(s, t, c);
  // SHARP: each head's share S / g once up its NIC and once down.
  const double sharp = s / t.g / (c.network_in_network_efficiency * t.b_nic);
  return t.l_intra + t.l_net + std::max(nvls_time(s, t, c), sharp);
}

double in_network_tree_time(double s, const Terms& t, const CollectiveContext& c) {
  return t.l_intra + 2 * log2_ceil(static_cast<std::int32_t>(t.m)) * t.l_net +
         std::max(nvls_time(s, t, c), tree_nic_time(s, t));
}

} // namespace

units::Seconds estimate_time(Algorithm algorithm, CollectiveKind kind, units::Bytes size, const CollectiveContext& c) {
  const Terms t = terms_of(c);
  const double s = size.value();
  const double f = step_factor(kind);
  const double share = (t.n - 1) / t.n * s * f;
  const double b_spread = t.multi ? t.b_nic : t.b_intra; // every link of a rank at once
  switch (algorithm) {
  case Algorithm::ring:
  case Algorithm::automatic: return units::seconds(ring_time(f * (t.n - 1), t.l_net, share, t.b_ring));
  case Algorithm::tree: return units::seconds(tree_time(s, t));
  case Algorithm::halving_doubling: return units::seconds(f * log2_ceil(c.ranks) * t.l_net + share / b_spread);
  case Algorithm::hierarchical:
    if (!t.multi) return estimate_time(Algorithm::ring, kind, size, c);
    return units::seconds(ring_time(f * (t.g - 1), t.l_intra, (t.g - 1) / t.g * s * f, t.b_pair) +
                          ring_time(f * (t.m - 1), t.l_net, (t.m - 1) / t.m * s / t.g * f, t.b_nic));
  case Algorithm::in_network: return units::seconds(in_network_time(s, t, c));
  case Algorithm::in_network_tree: return units::seconds(in_network_tree_time(s, t, c));
  case Algorithm::direct:
  case Algorithm::pairwise: // one or n - 1 rounds per phase; all-reduce has two phases
    return units::seconds(f * t.l_net * (algorithm == Algorithm::pairwise ? t.n - 1 : 1) +
                          f * (t.n - 1) / t.n * s / b_spread);
  }
  return units::seconds(0);
}

Algorithm choose_algorithm(CollectiveKind kind, units::Bytes size, const CollectiveContext& c, bool allow_tree,
                           bool with_protocols) {
  if (kind == CollectiveKind::all_to_all) return Algorithm::direct;
  if (kind == CollectiveKind::broadcast || kind == CollectiveKind::send_recv || c.ranks <= 2) return Algorithm::ring;
  // NCCL's own algorithms (NCCL_ALGO: ring, tree, NVLS; src/graph/tuning.cc): hierarchical and
  // halving-doubling are not NCCL's and run only when named. A mesh node's direct exchange stands
  // for RCCL's rings over all xGMI links at once.
  std::vector<Algorithm> candidates = {Algorithm::ring};
  if (allow_tree && kind == CollectiveKind::all_reduce && spans_nodes(c)) candidates.push_back(Algorithm::tree);
  // NVLS inside a node; across nodes SHARP where the network reduces (NCCL's NVLS with CollNet),
  // and NVLS_TREE where nodes of several ranks have NVLS.
  const bool sharp = c.network_in_network_efficiency > 0 && (c.ranks_per_node == 1 || c.in_network_reduction);
  if (kind == CollectiveKind::all_reduce && (spans_nodes(c) ? sharp : c.in_network_reduction))
    candidates.push_back(Algorithm::in_network);
  if (kind == CollectiveKind::all_reduce && spans_nodes(c) && c.ranks_per_node > 1 && c.in_network_reduction &&
      c.ranks % c.ranks_per_node == 0)
    candidates.push_back(Algorithm::in_network_tree);
  if (!spans_nodes(c) && c.intra_pair_bandwidth.value() > 0 && c.intra_pair_bandwidth < c.intra_bandwidth)
    candidates.push_back(Algorithm::direct); // a mesh: every link at once
  // Each candidate with its best protocol, as NCCL's tuner picks algorithm and protocol together.
  const auto estimate = [&](Algorithm a) {
    return with_protocols ? estimate_with_protocol(a, kind, size, c, choose_protocol(a, kind, size, c)).value()
                          : estimate_time(a, kind, size, c).value();
  };
  Algorithm best = Algorithm::ring;
  double best_time = estimate(best);
  for (Algorithm a : candidates) {
    const double t = estimate(a);
    if (t < best_time) {
      best = a;
      best_time = t;
    }
  }
  return best;
}

// NCCL 2.2x src/graph/tuning.cc: baseLatencies (ring) and hwLatencies (NVLINK, NET; ring) in us;
// bandwidth: LL moves 8 data bytes per 16 (busBw * .5), LL128 120 of 128 (busBw * 0.92).
ProtocolCost protocol_cost(Protocol p) {
  switch (p) {
  case Protocol::ll: return {units::seconds(6.6e-6), units::seconds(0.6e-6), units::seconds(2.7e-6), 0.5};
  case Protocol::ll128: return {units::seconds(14.0e-6), units::seconds(1.9e-6), units::seconds(4.0e-6), 0.92};
  case Protocol::simple: return {units::seconds(8.4e-6), units::seconds(3.4e-6), units::seconds(14.0e-6), 1.0};
  }
  return {};
}

} // namespace twocs::lowering
