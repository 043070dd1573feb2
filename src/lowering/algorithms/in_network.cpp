// In-network reduction (NVLink SHARP, "NVLS", on NVSwitch 3+; InfiniBand SHARP, Graham et al.,
// COMHPC 2016): the switch reduces and multicasts, so each rank moves its data about once.
// With NVLS each of h heads (h = min(n, 32), nvls_heads) loads-and-reduces its 1/h of the buffer
// from all ranks through the switch (its link carries S up, S/h down) and stores the result with
// a multicast (S/h up, S down): S (1 + 1/h) each way on a head's link, S on another rank's
// (NVIDIA/nccl src/device/all_reduce.h, the oneNode NVLS path: scatter and gather are copies in
// the rank's own memory). twocs carries the heads' load as a shift permutation through the
// switch (rank i -> i + 1: the same bytes on each rank's link up and down), pipelined in
// slices, with the wire bytes divided by the in-network efficiency (the platform's: NCCL's
// nvlsEfficiency of its own NVLink bandwidth, src/graph/tuning.cc, on the sustained link;
// docs/network.md, section 3).
//
// Across nodes (NCCL's NVLS with CollNet, CollNet Direct; src/device/all_reduce.h): inside each
// node NVLS reduce-scatters the buffer over its g ranks and gathers it back (S (1 + 1/g) on each
// rank's node link, as above), and each rank, the head of its 1/g, has the network's switches
// (SHARP) reduce that share across nodes: S/g up its NIC and S/g down, over the network's
// in-network efficiency; one rank per node needs no NVLS. NCCL's NVLS_TREE reduces each head's
// share with a tree between nodes instead (tree.cpp). NCCL runs the phases as one pipeline of
// chunks (scatter, reduce, network, gather warps at once), so they are simulated concurrently.
#include <cassert>
#include <numeric>

#include "schedule_builder.hpp"

namespace twocs::lowering::detail {
namespace {

/// A shift permutation over `ranks` (i -> i + 1) of `wire` bytes per message, in shape.chunks
/// slices per channel, each slice of a rank after its previous one.
void add_shift(CollectiveSchedule& s, const std::vector<std::int32_t>& ranks, units::Bytes wire,
               const ScheduleShape& shape) {
  const auto n = static_cast<std::int32_t>(ranks.size());
  if (n <= 1) return;
  const double slices = static_cast<double>(shape.channels) * static_cast<double>(shape.chunks);
  for (int c = 0; c < shape.channels; ++c) {
    const auto base = static_cast<std::uint32_t>(s.messages.size());
    for (int k = 0; k < shape.chunks; ++k)
      for (std::int32_t i = 0; i < n; ++i) {
        MessageIds after;
        if (k > 0) after.push_back(base + static_cast<std::uint32_t>((k - 1) * n + i));
        add_message(s, ranks[static_cast<std::size_t>(i)], ranks[static_cast<std::size_t>((i + 1) % n)], wire / slices,
                    k, std::move(after));
      }
  }
}

/// The NVLS part inside every node of g ranks: S (1 + 1/h) over the node's efficiency, h its heads
/// (the ranks that are not heads carry S and finish with them: NCCL's steps are lockstep).
void add_node_reductions(CollectiveSchedule& s, units::Bytes size, std::int32_t g, const ScheduleShape& shape) {
  assert(shape.in_network_efficiency > 0 && shape.in_network_efficiency <= 1);
  if (g <= 1) return;
  const units::Bytes wire = size * (1.0 + 1.0 / nvls_heads(g)) / shape.in_network_efficiency;
  for (std::int32_t node = 0; node < shape.ranks / g; ++node) {
    std::vector<std::int32_t> ranks(static_cast<std::size_t>(g));
    std::iota(ranks.begin(), ranks.end(), node * g);
    add_shift(s, ranks, wire, shape);
  }
}

std::int32_t ranks_in_node(const ScheduleShape& shape) {
  const bool spans = shape.ranks_per_node > 0 && shape.ranks_per_node < shape.ranks;
  return spans ? shape.ranks_per_node : shape.ranks;
}

/// The ranks holding local index j of every node.
std::vector<std::int32_t> heads(const ScheduleShape& shape, std::int32_t j) {
  const std::int32_t g = ranks_in_node(shape);
  std::vector<std::int32_t> ranks(static_cast<std::size_t>(shape.ranks / g));
  for (std::size_t node = 0; node < ranks.size(); ++node) ranks[node] = static_cast<std::int32_t>(node) * g + j;
  return ranks;
}

} // namespace

CollectiveSchedule in_network_schedule(units::Bytes size, const ScheduleShape& shape) {
  const std::int32_t n = shape.ranks;
  CollectiveSchedule s;
  s.algorithm = Algorithm::in_network;
  s.ranks = n;
  if (n <= 1) return s;
  const std::int32_t g = ranks_in_node(shape);
  add_node_reductions(s, size, g, shape);
  if (g == n) return s;
  // SHARP: each head's share up its NIC once and down once, through the network's switches.
  assert(shape.network_in_network_efficiency > 0 && shape.network_in_network_efficiency <= 1);
  for (std::int32_t j = 0; j < g; ++j)
    add_shift(s, heads(shape, j), size / static_cast<double>(g) / shape.network_in_network_efficiency, shape);
  return s;
}

CollectiveSchedule in_network_tree_schedule(units::Bytes size, const ScheduleShape& shape) {
  const std::int32_t n = shape.ranks;
  const std::int32_t g = ranks_in_node(shape);
  assert(g > 1 && g < n && n % g == 0);
  CollectiveSchedule s;
  s.algorithm = Algorithm::in_network_tree;
  s.ranks = n;
  add_node_reductions(s, size, g, shape);
  // Each head's share all-reduced by NCCL's tree between the nodes (one rank per node).
  ScheduleShape between = shape;
  between.ranks = n / g;
  between.ranks_per_node = 1;
  between.channels = 1;
  const CollectiveSchedule tree = tree_schedule(size / static_cast<double>(g), between);
  const std::vector<MessageIds> gate(static_cast<std::size_t>(n));
  for (std::int32_t j = 0; j < g; ++j) append_phase(s, tree, heads(shape, j), gate, 0);
  return s;
}

} // namespace twocs::lowering::detail
