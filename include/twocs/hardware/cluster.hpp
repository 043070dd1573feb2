// A cluster: devices in nodes, a node interconnect and an inter-node network
// (the platform file). Pure description; src/platform turns it into a topology.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

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
  fat_tree, // folded Clos of switches (Leiserson 1985); oversubscription thins the upper levels
  switch_,  // one non-blocking switch (an idealised crossbar)
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
  return t == NetworkTopology::fat_tree ? "fat-tree" : "switch";
}

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
