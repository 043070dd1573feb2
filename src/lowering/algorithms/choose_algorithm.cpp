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

} // namespace

units::Seconds estimate_time(Algorithm algorithm, CollectiveKind kind, units::Bytes size, const CollectiveContext& c) {
  const double n = c.ranks;
  const double s = size.value();
  const bool multi = spans_nodes(c);
  const double g = multi ? c.ranks_per_node : n;
  const double m = multi ? n / g : 1.0;
  const double b_intra = c.intra_bandwidth.value();
  const double b_pair = c.intra_pair_bandwidth.value() > 0 ? c.intra_pair_bandwidth.value() : b_intra;
  // A multi-node ring leaves each node through one NIC per channel; with one channel per local
  // rank every NIC carries one ring (NCCL's rings), so the node's NICs add up.
  const double b_ring = multi ? std::min(b_pair, c.inter_bandwidth.value() * g) : b_pair;
  const double l_intra = c.intra_latency.value();
  const double l_net = multi ? c.inter_latency.value() : l_intra;
  const double f = step_factor(kind);
  const double share = (n - 1) / n * s * f;
  switch (algorithm) {
  case Algorithm::ring:
  case Algorithm::automatic: return units::seconds(ring_time(f * (n - 1), l_net, share, b_ring));
  case Algorithm::tree: { // NCCL's (tree.cpp): up and down the chains and the node tree
    // A chain rank sends S each way per tree (2 S on its links); a node's NICs carry 2 S in all (an
    // inner node of one tree is a leaf of the other), S between two nodes. NCCL's tuner counts the
    // tree at 0.92 of its bandwidth (src/graph/tuning.cc, tree all-reduce busBw * .92).
    constexpr double nccl_tree_efficiency = 0.92;
    const double nic = multi ? (m == 2 ? 1.0 : 2.0) * s / (c.inter_bandwidth.value() * g) : 0.0;
    const double chain = g > 1 ? 2 * s / b_pair : 0.0;
    return units::seconds(2 * ((g - 1) * l_intra + log2_ceil(static_cast<std::int32_t>(m)) * l_net) +
                          std::max(nic, chain) / nccl_tree_efficiency);
  }
  case Algorithm::halving_doubling:
    return units::seconds(f * log2_ceil(c.ranks) * l_net + share / (multi ? c.inter_bandwidth.value() : b_intra));
  case Algorithm::hierarchical:
    if (!multi) return estimate_time(Algorithm::ring, kind, size, c);
    return units::seconds(ring_time(f * (g - 1), l_intra, (g - 1) / g * s * f, b_pair) +
                          ring_time(f * (m - 1), l_net, (m - 1) / m * s / g * f, c.inter_bandwidth.value()));
  case Algorithm::in_network: return units::seconds(l_intra + s * (1 + 1 / n) / (c.in_network_efficiency * b_intra));
  case Algorithm::direct:
  case Algorithm::pairwise: // one or n - 1 rounds per phase; all-reduce has two phases
    return units::seconds(f * l_net * (algorithm == Algorithm::pairwise ? n - 1 : 1) +
                          f * (n - 1) / n * s / (multi ? c.inter_bandwidth.value() : b_intra));
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
  if (kind == CollectiveKind::all_reduce && c.in_network_reduction && !spans_nodes(c))
    candidates.push_back(Algorithm::in_network);
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
