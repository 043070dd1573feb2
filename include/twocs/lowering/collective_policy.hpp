// Which algorithm each collective of an iteration runs, and with what shape: per communication
// kind (tensor, pipeline, data, expert) a fixed algorithm or `automatic` (NCCL-like tuner,
// collective_algorithm_choice.hpp), applied to the group's placement on nodes. The platform
// layer describes its links as a CollectiveNetwork (platform/collective_context.hpp); the same
// functions serve `twocs run` and `twocs collbench` (docs/network.md, "Automatic choice").
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>

#include <twocs/lowering/collective_algorithm.hpp>
#include <twocs/lowering/collective_algorithm_choice.hpp>
#include <twocs/lowering/collective_lowering.hpp>
#include <twocs/lowering/task_sink.hpp>

namespace twocs::lowering {

/// What the choice and the schedules need to know of the platform's links (sustained rates).
struct CollectiveNetwork {
  std::int64_t devices_per_node = 1; // devices i and j share a node when i / g == j / g
  std::int64_t devices_per_nic = 1;
  units::ByteRate intra_bandwidth;            // a device's links into its node's fabric, all together
  units::ByteRate intra_pair_bandwidth;       // between one pair of devices of a node
  units::Seconds intra_latency;               // one message within a node
  units::ByteRate inter_bandwidth;            // a device's share of the network (its NIC)
  units::Seconds inter_latency;               // one message across the network
  double in_network_efficiency = 0.0;         // the node's switch reduces (NVLS) when > 0
  std::int32_t in_network_channels = 16;      // NCCL's NVLS channels (hardware::NodeSpec)
  double network_in_network_efficiency = 0.0; // the scale-out switches reduce (SHARP) when > 0
  /// NCCL's Simple step buffer: NCCL_BUFFSIZE 4 MiB / NCCL_STEPS 8 (src/include/comm.h).
  double slice_bytes = 512.0 * 1024;
};

/// The algorithm per communication kind, and the network it is chosen for. Without a network
/// (tests of the lowering alone) every collective is the flat ring.
struct CollectivePolicy {
  std::array<Algorithm, model::comm_group_count> algorithms = default_algorithms();
  std::optional<CollectiveNetwork> network;
  /// Whether `automatic` may pick NCCL's tree (chains inside nodes, a double binary tree between
  /// them; algorithms/tree.cpp) across nodes, as NCCL's tuner does. Folded runs lower it whole
  /// over the group, coarse where its pipeline is long (collective_lowering.hpp).
  bool automatic_tree = true;
  /// Whether collectives within a node pay NCCL's protocol costs and `automatic` weighs them
  /// (collective_protocol.hpp), as `twocs collbench` does: one model for both. On by default; it
  /// moved runs.yaml's errors by under 0.1 point and two NeMo FP8 runs by +0.7 and +1.1 points
  /// (docs/network.md, section 7).
  bool protocols = true;
  /// Rings step by step, coarse (one transfer per link) or coarse where large (collective_lowering.hpp).
  CollectiveLowering lowering = CollectiveLowering::step;
  /// Folded runs (`--fold shared`): the collectives and messages of the simulated devices' folded
  /// peers that leave the node are lowered whole as traffic without compute, so that links the
  /// replicas share carry their load (src/lowering/peer_traffic.hpp). Off: each folded collective
  /// is lowered from the simulated member's side, exact where no replicas share a link.
  bool folded_peer_traffic = false;

  [[nodiscard]] static constexpr std::array<Algorithm, model::comm_group_count> default_algorithms() {
    std::array<Algorithm, model::comm_group_count> a{};
    a.fill(Algorithm::automatic);
    return a;
  }
  [[nodiscard]] Algorithm for_group(model::CommGroup g) const { return algorithms[static_cast<std::size_t>(g)]; }
};

/// How many consecutive members of `devices` share each node: g when every node the group
/// touches holds exactly g consecutive members, 1 when the placement is irregular; 0 when all
/// members sit in one node.
[[nodiscard]] std::int32_t ranks_per_node(const CollectiveNetwork& network, std::span<const DeviceId> devices);

/// The links of a group (collective_algorithm_choice.hpp) placed on `devices`.
[[nodiscard]] CollectiveContext group_context(const CollectiveNetwork& network, std::span<const DeviceId> devices);

/// The schedule's shape for that group: across nodes one channel per member of a node (each its
/// own NIC, NCCL's rings leave every node through a different NIC), within a node one channel.
[[nodiscard]] ScheduleShape group_shape(const CollectiveNetwork& network, std::span<const DeviceId> devices);

struct CollectiveChoice {
  Algorithm algorithm = Algorithm::ring; // never `automatic`
  ScheduleShape shape{};                 // shape.coarse: the ring is lowered coarse (policy.lowering)
};

/// The algorithm and shape of a collective of `kind` and `size` (nccl-tests' S) over `devices`
/// of group `group`: the policy's algorithm for the group, `automatic` resolved by
/// choose_algorithm. Point-to-point messages and groups of two or fewer are rings. A ring is
/// marked coarse where policy.lowering asks (lowers_coarse), with or without a network.
[[nodiscard]] CollectiveChoice choose_collective(const CollectivePolicy& policy, model::CommGroup group,
                                                 CollectiveKind kind, units::Bytes size,
                                                 std::span<const DeviceId> devices);

} // namespace twocs::lowering
