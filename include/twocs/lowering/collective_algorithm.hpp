// Collective algorithms as pure schedules: the point-to-point messages a collective is made of,
// between ranks 0..n-1 of its group, each with the messages it must wait for. Independent of
// the task graph, so each algorithm is testable alone; src/lowering/algorithms/ builds them,
// docs/network.md gives each one's cost on an idle network and its source.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <twocs/model/operator.hpp>
#include <twocs/units/quantity.hpp>

namespace twocs::lowering {

/// What a collective computes (nccl-tests' names). Sizes follow nccl-tests: S is the whole
/// array, i.e. the all-reduce buffer, the all-gather output and the reduce-scatter input.
enum class CollectiveKind : std::uint8_t { all_reduce, reduce_scatter, all_gather, all_to_all, broadcast, send_recv };

enum class Algorithm : std::uint8_t {
  automatic,        // chosen per call by estimated time (choose_algorithm), like NCCL's tuner
  ring,             // Patarasuk & Yuan 2009; NCCL ring, several channels, pipelined chunks
  tree,             // double binary tree (Sanders et al. 2009; NCCL 2.4 "trees")
  halving_doubling, // recursive halving then doubling (Rabenseifner 2004; Thakur et al. 2005)
  hierarchical,     // intra-node reduce-scatter, inter-node all-reduce, intra-node all-gather
  in_network,       // switch reduces (NVLink SHARP "NVLS", InfiniBand SHARP): each rank sends once
  direct,           // every pair at once (all-to-all; reduce-scatter/all-gather on a mesh)
  pairwise,         // all-to-all: n - 1 rounds of one partner each
  in_network_tree,  // NCCL's NVLS_TREE: NVLS inside each node, a tree of each NIC's share between nodes
};

/// NCCL's NVLS heads in a group of `ranks` inside one NVLink domain: the ranks that reduce and
/// multicast, at most NCCL_MAX_NVLS_ARITY = 32 (NVIDIA/nccl src/include/device.h; src/graph/search.cc
/// sets the NVLS search's channels to min(GPUs, 32), one head each). A full NVL72 rack has 32.
constexpr std::int32_t nvls_max_heads = 32;
[[nodiscard]] constexpr std::int32_t nvls_heads(std::int32_t ranks) {
  return ranks < nvls_max_heads ? ranks : nvls_max_heads;
}

[[nodiscard]] std::string_view to_string(CollectiveKind k);
[[nodiscard]] std::string_view to_string(Algorithm a);
[[nodiscard]] std::optional<Algorithm> algorithm_from_string(std::string_view name);
[[nodiscard]] std::optional<CollectiveKind> collective_kind_from_string(std::string_view name);
[[nodiscard]] CollectiveKind kind_of(model::Collective c);

/// The algorithm the platform file asks for a communication kind (`cluster.network.collectives`,
/// e.g. {tensor: ring, data: auto}); `automatic` where it names none.
[[nodiscard]] Algorithm configured_algorithm(const std::map<std::string, std::string>& collectives,
                                             model::CommGroup group);

/// One point-to-point message of a schedule. `after` holds indices of earlier messages of the
/// same schedule that must finish before this one starts.
struct ScheduledMessage {
  std::int32_t src = 0;
  std::int32_t dst = 0;
  units::Bytes bytes;
  std::int32_t step = 0; // the algorithm's step (for traces)
  std::vector<std::uint32_t> after;
  /// Message latencies it stands for: 1, or a coarse ring's steps (collective_lowering.hpp).
  std::int32_t latency_steps = 1;
};

struct CollectiveSchedule {
  Algorithm algorithm = Algorithm::ring; // the one built (a fallback when the asked one does not apply)
  std::int32_t ranks = 0;
  std::vector<ScheduledMessage> messages;
  /// A message after which every rank's part is done (a coarse ring's end: every member of a
  /// pipelined ring finishes with its slowest link); none: each rank leaves after its own messages.
  std::optional<std::uint32_t> common_exit;
};

/// The group and the knobs of an algorithm.
struct ScheduleShape {
  std::int32_t ranks = 1;
  std::int32_t ranks_per_node = 0; // consecutive ranks sharing a node; 0: all in one node
  int channels = 1;                // parallel rings/trees, each over size / channels (NCCL channels)
  int chunks = 1;                  // pipeline slices per channel: a slice moves on as soon as it arrives
  /// With chunks = 1, trees and chains (broadcast, send-recv) cut each channel's data into slices
  /// of at most this many bytes (at most 64), as NCCL streams through its step buffers
  /// (NCCL_BUFFSIZE 4 MiB over NCCL_STEPS 8 = 512 KiB); 0: no slicing.
  double slice_bytes = 0;
  /// In-network reduction: wire bytes per payload byte beyond the ideal (1 / efficiency; NCCL's
  /// tuner uses an NVLS efficiency of 0.85 on Hopper and 0.74 on Blackwell, src/graph/tuning.cc).
  double in_network_efficiency = 1.0;
  /// Whether the node's switch reduces (NVLS): in-network reduction inside a node needs it. True
  /// where no network is known (tests of the schedules alone).
  bool node_in_network = true;
  /// The scale-out switches reduce (InfiniBand SHARP) at this share of the NIC's rate; 0: they do
  /// not, and an in-network reduction cannot span nodes.
  double network_in_network_efficiency = 0.0;
  /// Rings (reduce-scatter, all-gather, all-reduce) as one message per ring link and channel
  /// carrying the whole step sequence's bytes (collective_lowering.hpp); other algorithms ignore it.
  bool coarse = false;
  /// NCCL's protocol (collective_protocol.hpp): payload bytes per wire byte (LL 0.5, LL128 0.92,
  /// Simple 1; every message carries its bytes / this), and the route latencies its latency adds
  /// beyond the messages' own, waited by every message that starts the collective.
  double protocol_bandwidth_fraction = 1.0;
  int protocol_latency_steps = 0;
};

/// The ring of `channel` as NCCL builds it: position p of the ring is rank ring_order(...)[p].
/// Nodes in order, the ranks of a node rotated by the channel, so that channel c enters and
/// leaves each node through a different rank (and NIC) and the node's NICs carry one channel each
/// (NCCL's rings, src/graph/rings.cc and search.cc). Within one node: the ranks in order.
[[nodiscard]] std::vector<std::int32_t> ring_order(const ScheduleShape& shape, int channel);

/// DeepEP's token dispatch (or combine) over `shape.ranks` ranks in nodes of
/// `shape.ranks_per_node`: each token once per rank holding one of its experts, once per node
/// over the network and forwarded inside it (src/lowering/algorithms/forwarded.cpp).
[[nodiscard]] CollectiveSchedule forwarded_dispatch_schedule(const model::TokenRouting& routing,
                                                             const ScheduleShape& shape);

/// Builds `algorithm` for `kind` over `shape.ranks` ranks moving `size` (nccl-tests' S). Falls
/// back to the ring where the algorithm does not apply (e.g. halving-doubling on a group that is
/// not a power of two, hierarchical within one node); the result names the one built.
/// Resolve `automatic` first (choose_algorithm); left unresolved it builds the ring.
[[nodiscard]] CollectiveSchedule make_schedule(Algorithm algorithm, CollectiveKind kind, units::Bytes size,
                                               const ScheduleShape& shape);

/// The algorithm make_schedule builds for `algorithm` (the ring where the asked one does not
/// apply), without building it.
[[nodiscard]] Algorithm scheduled_algorithm(Algorithm algorithm, CollectiveKind kind, const ScheduleShape& shape);

/// The bytes each rank must send at least (the bandwidth bound's numerator, docs/network.md):
/// all-reduce 2 (n - 1) / n S, reduce-scatter and all-gather (n - 1) / n S, all-to-all
/// (n - 1) / n S, broadcast S (the root), send_recv S; with in-network reduction S.
[[nodiscard]] units::Bytes bytes_each_rank_sends(CollectiveKind kind, Algorithm algorithm, units::Bytes size,
                                                 std::int32_t ranks);

} // namespace twocs::lowering
