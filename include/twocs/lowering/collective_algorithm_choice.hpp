// The automatic choice of a collective algorithm, like NCCL's tuner (src/graph/tuning.cc in
// NVIDIA/nccl): estimate each applicable algorithm's time on an idle network as
// latency x steps + bytes / bandwidth and take the fastest (docs/network.md, "Automatic choice").
#pragma once

#include <cstdint>

#include <twocs/lowering/collective_algorithm.hpp>
#include <twocs/units/quantity.hpp>

namespace twocs::lowering {

/// What the choice needs to know of the group and its links (sustained rates, per direction).
struct CollectiveContext {
  std::int32_t ranks = 1;
  std::int32_t ranks_per_node = 0;      // 0: the whole group in one node (or one scale-up domain)
  units::ByteRate intra_bandwidth;      // a rank's links into its node's fabric, all together
  units::ByteRate intra_pair_bandwidth; // between one pair of ranks (a mesh: one of n - 1 links)
  units::Seconds intra_latency;         // one message within a node
  units::ByteRate inter_bandwidth;      // a rank's share of the network (its NIC)
  units::Seconds inter_latency;         // one message across the network
  bool in_network_reduction = false;    // the node's switch reduces (NVLS)
  double in_network_efficiency = 1.0;
  std::int32_t in_network_channels = 16;      // NCCL's NVLS channels (hardware::NodeSpec)
  double network_in_network_efficiency = 0.0; // the scale-out switches reduce (SHARP) when > 0
};

/// Estimated time of `algorithm` on an idle network (the closed forms of docs/network.md).
[[nodiscard]] units::Seconds estimate_time(Algorithm algorithm, CollectiveKind kind, units::Bytes size,
                                           const CollectiveContext& context);

/// The applicable algorithm with the smallest estimate; ties keep the ring. `allow_tree`: whether
/// the double binary tree is a candidate across nodes; `with_protocols`: whether each estimate
/// carries its best NCCL protocol's costs (collective_protocol.hpp).
[[nodiscard]] Algorithm choose_algorithm(CollectiveKind kind, units::Bytes size, const CollectiveContext& context,
                                         bool allow_tree = true, bool with_protocols = true);

/// NCCL's protocols and their documented costs (src/graph/tuning.cc, NCCL 2.2x): a per-hop
/// latency over NVLink and over the network, and the share of the link bandwidth they reach.
enum class Protocol : std::uint8_t { ll, ll128, simple };
struct ProtocolCost {
  units::Seconds base_latency;     // per collective (ring)
  units::Seconds nvlink_hop;       // per ring step within a node
  units::Seconds network_hop;      // per ring step across nodes
  double bandwidth_fraction = 1.0; // LL: 8-byte flags with 8-byte data; LL128: 120 of 128 bytes
};
[[nodiscard]] ProtocolCost protocol_cost(Protocol p);

} // namespace twocs::lowering
