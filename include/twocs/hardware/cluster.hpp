// A cluster: devices in nodes, a node interconnect and an inter-node network
// (the platform file). Pure description; src/platform turns it into a topology.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <twocs/hardware/device.hpp>
#include <twocs/units/quantity.hpp>

namespace twocs::hardware {

/// Links are described per device and per direction (full duplex). `latency` is end to end:
/// one message from one device to another through this level of the fabric. `efficiency` is the
/// fraction of the line rate that collective traffic sustains (protocol and packet overheads;
/// e.g. NCCL reaches ~230 of 300 GB/s per A100 on NVLink 3, NVIDIA/nccl-tests issue #149).
struct LinkSpec {
  units::ByteRate bandwidth;
  units::Seconds latency;
  double efficiency = 1.0;
};

enum class NodeTopology {
  switch_, // every device has one full-duplex link to a non-blocking switch (NVSwitch)
  mesh,    // every pair of devices has its own link (AMD Infinity Fabric / xGMI on MI300X, MI250X)
  ring,    // each device is linked to its two neighbours; other pairs go through devices between
  pcie,    // every device has one link to the host's PCIe switch (no GPU fabric)
};

enum class NetworkTopology {
  fat_tree,      // folded Clos of switches (Leiserson 1985); oversubscription thins the upper levels
  switch_,       // one non-blocking switch (an idealised crossbar)
  rail_fat_tree, // NIC i of every node on rail i: a leaf switch per rail per group of nodes (DGX SuperPOD)
  torus,         // nodes on a 2D/3D torus with wraparound links, dimension-order routing (TPU-like)
  dragonfly,     // groups of routers, all-to-all local and global links, minimal routing (Kim et al. 2008)
};

/// How a flow picks among equal-cost paths of a fat tree.
enum class Routing {
  ideal, // fat-tree: SimGrid's D-mod-K; rail-fat-tree: one aggregated link per switch tier
  ecmp,  // each flow hashed onto one of the equal-cost uplinks (src, dst, flow id)
};

/// Where traffic between different rails of a rail-optimized fat tree goes.
enum class CrossRail {
  pxn,   // over the node interconnect to the device on the destination's rail, then that rail (NCCL PXN)
  spine, // up the sender's rail and down the receiver's rail through the spine
};

[[nodiscard]] constexpr std::string_view to_string(NodeTopology t) {
  switch (t) {
  case NodeTopology::mesh: return "mesh";
  case NodeTopology::ring: return "ring";
  case NodeTopology::pcie: return "pcie";
  default: return "switch";
  }
}
[[nodiscard]] constexpr std::string_view to_string(NetworkTopology t) {
  switch (t) {
  case NetworkTopology::switch_: return "switch";
  case NetworkTopology::rail_fat_tree: return "rail-fat-tree";
  case NetworkTopology::torus: return "torus";
  case NetworkTopology::dragonfly: return "dragonfly";
  default: return "fat-tree";
  }
}
[[nodiscard]] constexpr std::string_view to_string(Routing r) { return r == Routing::ecmp ? "ecmp" : "ideal"; }
[[nodiscard]] constexpr std::string_view to_string(CrossRail c) { return c == CrossRail::spine ? "spine" : "pxn"; }

/// NCCL's MAXCHANNELS (src/include/device.h): no collective runs on more channels.
inline constexpr std::int32_t max_in_network_channels = 64;

struct NodeSpec {
  std::int64_t devices = 1;
  NodeTopology topology = NodeTopology::switch_;
  /// Per device and per direction, over all its links: a mesh splits it evenly over the device's
  /// devices - 1 peer links, a ring over its two neighbour links.
  LinkSpec interconnect;
  /// The node's switch reduces in the network (NVLink SHARP, NVSwitch 3 and later); the wire
  /// bytes of an in-network reduction over its efficiency (NCCL's tuner: 0.85 Hopper, 0.74
  /// Blackwell, src/graph/tuning.cc nvlsEfficiency). 0: no in-network reduction.
  double in_network_efficiency = 0.0;
  /// NCCL's channels (thread blocks) for an in-network reduction, each pipelining its own chunks
  /// (src/transport/nvls.cc: NVLS_NCHANNELS_SM90 16 on Hopper, NVLS_NCHANNELS_SM100_NVL 24 on
  /// Blackwell within one NVLink domain).
  std::int32_t in_network_channels = 16;
  /// CPU time the host (one process per device) spends launching one kernel: a PyTorch
  /// operator's dispatch and its CUDA launch (lowering/device_program.hpp). 0: the host never
  /// holds the device back. Workloads override it with training.host.launch_time.
  units::Seconds host_launch_time = units::Seconds(0);
};

struct NetworkSpec {
  NetworkTopology topology = NetworkTopology::fat_tree;
  LinkSpec link;                      // the NIC of each device, per direction
  double oversubscription = 1.0;      // bandwidth down / bandwidth up at the leaf switches (1 = non-blocking)
  std::int64_t nodes_per_switch = 32; // nodes under one leaf switch (a "scalable unit")
  /// Leaf switches under one aggregation layer (a pod); 0: two levels at most. With more nodes
  /// than nodes_per_switch x switches_per_pod the tree has three levels.
  std::int64_t switches_per_pod = 0;
  double upper_oversubscription = 1.0; // links down over links up at the aggregation switches (3 levels)
  std::int64_t devices_per_nic = 1;    // devices sharing one NIC (its bandwidth is `link`'s)
  units::Seconds hop_latency;          // per fabric link crossed (switch + cable), beyond `link.latency`
  Routing routing = Routing::ideal;
  std::uint64_t ecmp_seed = 0; // mixed into every ECMP hash (another job, another placement)
  /// The scale-out switches reduce (InfiniBand SHARP, NCCL's CollNet) when > 0: the share of the
  /// NIC's rate an in-network all-reduce reaches (docs/network.md, "In-network reduction").
  double in_network_efficiency = 0.0;
  CrossRail cross_rail = CrossRail::pxn;
  /// Per fabric link and direction (switch to switch, torus neighbours); 0: a node's NICs together.
  units::ByteRate fabric_bandwidth;
  std::vector<std::int64_t> torus_dimensions; // nodes along each torus dimension; their product is `nodes`
  std::int64_t switches_per_group = 0;        // dragonfly: routers per group (nodes_per_switch: nodes per router)
  /// Collective algorithm per communication kind ("tensor", "pipeline", "data", "expert" ->
  /// "auto", "ring", ...; docs/network.md); absent kinds keep the ring.
  std::map<std::string, std::string> collectives;
};

struct ClusterSpec {
  std::string name;
  DeviceSpec device;
  NodeSpec node;
  std::int64_t nodes = 1;
  NetworkSpec network;

  [[nodiscard]] std::int64_t device_count() const { return nodes * node.devices; }
};

} // namespace twocs::hardware
