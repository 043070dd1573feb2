// NCCL's protocols (LL, LL128, Simple) as the simulated collectives pay them: per collective a
// latency from NCCL's tuner (src/graph/tuning.cc: a base latency plus a per-step latency over
// NVLink and over the network, per algorithm and protocol) and a share of the link bandwidth
// (LL 0.5, LL128 0.92, Simple 1). The protocol is chosen per message size as NCCL's tuner does:
// the one with the smallest latency + bytes / (bandwidth x share). docs/network.md, "Protocols".
#pragma once

#include <twocs/lowering/collective_algorithm.hpp>
#include <twocs/lowering/collective_algorithm_choice.hpp>
#include <twocs/units/quantity.hpp>

namespace twocs::lowering {

/// A protocol and what it costs one collective of a given algorithm and group.
struct ProtocolChoice {
  Protocol protocol = Protocol::simple;
  units::Seconds latency;          // NCCL's latency of the whole collective (tuning.cc)
  double bandwidth_fraction = 1.0; // payload share of the link bandwidth
};

/// NCCL's latency of `algorithm` with `protocol` over the group of `context` (tuning.cc): ring
/// (and the direct exchange standing for RCCL's rings on a mesh) base + per step a hop, NVLink
/// within a node, network across; tree base + 2 ((g - 1) NVLink + log2(m) network); NVLS 25 us
/// (+ 18 us across nodes). Zero for algorithms that are not NCCL's (halving-doubling,
/// hierarchical, pairwise) and for collectives it does not model (all-to-all, broadcast).
[[nodiscard]] units::Seconds nccl_latency(Algorithm algorithm, Protocol protocol, CollectiveKind kind,
                                          const CollectiveContext& context);

/// NCCL's NVLS chunk for an all-reduce of `size` (src/enqueue.cc, calcCollChunking): 128 KiB,
/// halved to 64, 32 and 16 KiB below 64, 8 and 2 rounds of channels x ranks chunks.
[[nodiscard]] units::Bytes in_network_chunk(units::Bytes size, const CollectiveContext& context);

/// What NCCL's chunked NVLS pipeline adds to an in-network all-reduce beyond its bandwidth term:
/// its three stages (scatter, reduce + multicast, gather; src/device/all_reduce.h) fill and
/// drain, so the collective takes (rounds + 2) round times, a round being channels x ranks chunks
/// (or the whole message) at the in-network rate. Small against large messages (128 KiB chunks
/// from 1 GiB on 8 GPUs), tens of microseconds from 1 to 32 MiB (docs/network.md, section 4).
[[nodiscard]] units::Seconds in_network_pipeline_fill(units::Bytes size, const CollectiveContext& context);

/// The protocol NCCL's tuner would take for `algorithm` at `size`: the smallest
/// max(NCCL latency, simulated latency) + bytes term / bandwidth share, where the simulated
/// terms are estimate_time's. Only the ring (and direct) may use LL and LL128; NVLS and the tree
/// run Simple here (NVLS has no other, tuning.cc); NVLS's latency includes its pipeline fill.
[[nodiscard]] ProtocolChoice choose_protocol(Algorithm algorithm, CollectiveKind kind, units::Bytes size,
                                             const CollectiveContext& context);

/// estimate_time with the protocol's costs: max(NCCL latency, simulated latency) + bytes term / share.
[[nodiscard]] units::Seconds estimate_with_protocol(Algorithm algorithm, CollectiveKind kind, units::Bytes size,
                                                    const CollectiveContext& context, const ProtocolChoice& protocol);

/// Sets `shape`'s protocol fields for `protocol`: its bandwidth share, and the latency NCCL pays
/// beyond the route latencies the simulated messages already pay, as whole route latencies of
/// the group's slowest route (the network across nodes), which the messages that start the
/// collective wait before moving (Transfer::latency_steps).
void apply_protocol(ScheduleShape& shape, Algorithm algorithm, CollectiveKind kind, const CollectiveContext& context,
                    const ProtocolChoice& protocol);

} // namespace twocs::lowering
