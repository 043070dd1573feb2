#include <twocs/lowering/collective_protocol.hpp>

#include <algorithm>
#include <cmath>
#include <initializer_list>

namespace twocs::lowering {
namespace {

bool spans_nodes(const CollectiveContext& c) { return c.ranks_per_node > 0 && c.ranks_per_node < c.ranks; }

/// The ranks NVLS runs over: the node's share of the group (its heads).
std::int32_t nvls_ranks(const CollectiveContext& c) { return spans_nodes(c) ? c.ranks_per_node : c.ranks; }

// NCCL src/graph/tuning.cc, tree hwLatencies (us, Simple): NVLink 4.0, network 14; base 8.4.
constexpr double tree_simple_base = 8.4e-6;
constexpr double tree_simple_nvlink_hop = 4.0e-6;
constexpr double tree_simple_network_hop = 14.0e-6;
// NCCL src/graph/tuning.cc, NVLS hwLatencies (us, Simple): NVLink 25, network 18; base 0.
constexpr double nvls_nvlink_latency = 25e-6;
constexpr double nvls_network_latency = 18e-6;
// NCCL src/graph/tuning.cc, NVLS_TREE hwLatencies (us, Simple): NVLink 25, network 20.9; base 0;
// latency intra + 2 log2(nodes) x network.
constexpr double nvls_tree_network_latency = 20.9e-6;

// NCCL's NVLS chunk: NCCL_NVLS_CHUNKSIZE 128 KiB (src/transport/nvls.cc), under the Simple step
// NCCL_BUFFSIZE 4 MiB / NCCL_STEPS 8 = 512 KiB (src/include/comm.h).
constexpr double nvls_max_chunk = 128.0 * 1024;
// NCCL's single-node NVLS all-reduce runs three warp groups per channel as a pipeline: scatter
// into the switch buffers, reduce + multicast, gather (src/device/all_reduce.h, NCCL_ALGO_NVLS).
constexpr double nvls_pipeline_stages = 3;

bool ring_like(Algorithm a) { return a == Algorithm::ring || a == Algorithm::automatic || a == Algorithm::direct; }

/// NCCL's ring steps: 2 (n - 1) for all-reduce, n - 1 for reduce-scatter and all-gather
/// (tuning.cc nsteps); of them 2 (m - 1) or m - 1 cross the network (nInterSteps).
double ring_latency(Protocol p, CollectiveKind kind, const CollectiveContext& c) {
  const double f = kind == CollectiveKind::all_reduce ? 2.0 : 1.0;
  const double n = c.ranks;
  const double m = spans_nodes(c) ? n / c.ranks_per_node : 1.0;
  const double inter_steps = f * (m - 1);
  const double steps = f * (n - 1);
  const ProtocolCost cost = protocol_cost(p);
  return cost.base_latency.value() + (steps - inter_steps) * cost.nvlink_hop.value() +
         inter_steps * cost.network_hop.value();
}

bool modelled_kind(CollectiveKind k) {
  return k == CollectiveKind::all_reduce || k == CollectiveKind::reduce_scatter || k == CollectiveKind::all_gather;
}

} // namespace

units::Seconds nccl_latency(Algorithm algorithm, Protocol protocol, CollectiveKind kind, const CollectiveContext& c) {
  if (!modelled_kind(kind) || c.ranks <= 1) return units::seconds(0);
  if (ring_like(algorithm)) return units::seconds(ring_latency(protocol, kind, c));
  const bool multi = spans_nodes(c);
  if (algorithm == Algorithm::tree && kind == CollectiveKind::all_reduce) {
    const double g = multi ? c.ranks_per_node : c.ranks;
    const double m = multi ? static_cast<double>(c.ranks) / g : 1.0;
    return units::seconds(tree_simple_base +
                          2 * ((g - 1) * tree_simple_nvlink_hop + std::floor(std::log2(m)) * tree_simple_network_hop));
  }
  if (algorithm == Algorithm::in_network && kind == CollectiveKind::all_reduce)
    return units::seconds(nvls_nvlink_latency + (multi ? nvls_network_latency : 0.0));
  if (algorithm == Algorithm::in_network_tree && kind == CollectiveKind::all_reduce && multi) {
    const double m = static_cast<double>(c.ranks) / c.ranks_per_node;
    return units::seconds(nvls_nvlink_latency + 2 * std::floor(std::log2(m)) * nvls_tree_network_latency);
  }
  return units::seconds(0);
}

units::Bytes in_network_chunk(units::Bytes size, const CollectiveContext& c) {
  // src/enqueue.cc (calcCollChunking, NCCL_ALGO_NVLS): concurrent ops = channels x heads (the
  // node's ranks, at most 32: nvls_heads); the chunk halves below 64, 8 and 2 rounds of them, down to 16 KiB.
  const double ops = static_cast<double>(c.in_network_channels) * std::max(1, nvls_heads(nvls_ranks(c)));
  const double s = size.value();
  double chunk = nvls_max_chunk;
  if (s < 64 * ops * chunk && chunk > 65536) chunk = 65536;
  if (s < 8 * ops * chunk && chunk > 32768) chunk = 32768;
  if (s < 2 * ops * chunk && chunk > 16384) chunk = 16384;
  return units::Bytes(chunk);
}

units::Seconds in_network_pipeline_fill(units::Bytes size, const CollectiveContext& c) {
  if (nvls_ranks(c) <= 1) return units::seconds(0); // no NVLS: one rank per node
  // One round moves channels x heads chunks (all of `size` when it is smaller), at the simulated
  // in-network rate: each head's link carries S (1 + 1/h) / e (estimate_time), h the node's heads.
  const double h = nvls_heads(nvls_ranks(c));
  const double round =
      std::min(size.value(), static_cast<double>(c.in_network_channels) * h * in_network_chunk(size, c).value());
  const double round_time = round * (1 + 1 / h) / (c.in_network_efficiency * c.intra_bandwidth.value());
  // The pipeline fills and drains: the last round leaves the last stage stages - 1 rounds late.
  return units::seconds((nvls_pipeline_stages - 1) * round_time);
}

units::Seconds estimate_with_protocol(Algorithm algorithm, CollectiveKind kind, units::Bytes size,
                                      const CollectiveContext& c, const ProtocolChoice& p) {
  const double simulated_latency = estimate_time(algorithm, kind, units::Bytes(0), c).value();
  const double bytes_term = estimate_time(algorithm, kind, size, c).value() - simulated_latency;
  return units::seconds(std::max(p.latency.value(), simulated_latency) + bytes_term / p.bandwidth_fraction);
}

ProtocolChoice choose_protocol(Algorithm algorithm, CollectiveKind kind, units::Bytes size,
                               const CollectiveContext& c) {
  const bool nvls = (algorithm == Algorithm::in_network || algorithm == Algorithm::in_network_tree) &&
                    kind == CollectiveKind::all_reduce;
  const auto choice = [&](Protocol p) {
    const units::Seconds fill = nvls ? in_network_pipeline_fill(size, c) : units::seconds(0);
    return ProtocolChoice{p, nccl_latency(algorithm, p, kind, c) + fill, protocol_cost(p).bandwidth_fraction};
  };
  ProtocolChoice best = choice(Protocol::simple);
  if (!ring_like(algorithm) || !modelled_kind(kind)) return best;
  double best_time = estimate_with_protocol(algorithm, kind, size, c, best).value();
  for (Protocol p : {Protocol::ll128, Protocol::ll}) {
    const ProtocolChoice candidate = choice(p);
    const double t = estimate_with_protocol(algorithm, kind, size, c, candidate).value();
    if (t < best_time) {
      best = candidate;
      best_time = t;
    }
  }
  return best;
}

void apply_protocol(ScheduleShape& shape, Algorithm algorithm, CollectiveKind kind, const CollectiveContext& c,
                    const ProtocolChoice& p) {
  shape.protocol_bandwidth_fraction = p.bandwidth_fraction;
  const double simulated_latency = estimate_time(algorithm, kind, units::Bytes(0), c).value();
  const double route = spans_nodes(c) ? c.inter_latency.value() : c.intra_latency.value();
  const double extra = std::max(0.0, p.latency.value() - simulated_latency);
  // Whole route latencies (the engine's unit of delay); a platform without latency gets none.
  shape.protocol_latency_steps = route > 0 ? static_cast<int>(std::lround(extra / route)) : 0;
}

} // namespace twocs::lowering
