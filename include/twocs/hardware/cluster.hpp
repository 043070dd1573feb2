// A cluster: devices in nodes, a node interconnect and an inter-node network
// (the platform file). Pure description; src/platform turns it into a topology.
#pragma once

#include <cstdint>
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
  switch_, // every device has one full-duplex link to a non-blocking switch (NVSwitch, Infinity Fabric switch)
};

enum class NetworkTopology {
  fat_tree, // folded Clos of switches (Leiserson 1985); oversubscription thins the upper levels
  switch_,  // one non-blocking switch (an idealised crossbar)
};

[[nodiscard]] constexpr std::string_view to_string(NodeTopology) { return "switch"; }
[[nodiscard]] constexpr std::string_view to_string(NetworkTopology t) {
  return t == NetworkTopology::fat_tree ? "fat-tree" : "switch";
}

struct NodeSpec {
  std::int64_t devices = 1;
  NodeTopology topology = NodeTopology::switch_;
  LinkSpec interconnect; // per device, per direction
};

struct NetworkSpec {
  NetworkTopology topology = NetworkTopology::fat_tree;
  LinkSpec link;                      // the NIC of each device, per direction
  double oversubscription = 1.0;      // bandwidth down / bandwidth up at the leaf switches (1 = non-blocking)
  std::int64_t nodes_per_switch = 32; // nodes under one leaf switch (a "scalable unit")
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
