// The simulated platform as a pure description: which links exist, their bandwidth and
// latency, and the shape of the inter-node fabric. The engine instantiates it in SimGrid;
// nothing here depends on SimGrid, so the topology is testable on its own.
//
// Structure (docs/platform-model.md):
//   node zone: switch/pcie: each device has a full-duplex link to the node switch; mesh: each
//              pair of devices has its own link; ring: each device links to the next one. The
//              devices reach the network through NICs (one per devices_per_nic devices);
//   network:   a fat tree (SimGrid PGFT) of 1 to 3 levels whose leaves are nodes; a node's leaf
//              link carries the aggregate of its NICs, upper levels are thinned by the
//              oversubscription of their level. Rail-optimized fat trees, ECMP routing, tori and
//              dragonflies are routed flow by flow instead (`routed`, routed_fabric.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <twocs/hardware/cluster.hpp>
#include <twocs/platform/routed_fabric.hpp>
#include <twocs/units/quantity.hpp>

namespace twocs::platform {

/// Parameters of a SimGrid parallel generalized fat tree (PGFT; Zahavi 2010): per level, the
/// number of children per switch (`down`), of parents per element (`up`) and of parallel links
/// between connected elements (`parallel`). Leaves are nodes; there may be more leaves than
/// nodes (the spare ones stay empty).
struct FatTreeShape {
  unsigned levels = 1;
  std::vector<unsigned> down;
  std::vector<unsigned> up;
  std::vector<unsigned> parallel;

  [[nodiscard]] std::int64_t leaves() const;
  /// Links down over links up at a leaf switch: k/p for two levels (p = round(k / requested
  /// oversubscription), at least 1, so the effective value may differ from the requested one);
  /// 1 for a single switch.
  [[nodiscard]] double oversubscription() const;
  /// The same at the aggregation switches of a three-level tree (a / p2); 1 otherwise.
  [[nodiscard]] double upper_oversubscription() const;
};

struct Topology {
  std::string name;
  std::int64_t devices = 0; // devices simulated (the world size)
  std::int64_t devices_per_node = 1;
  std::int64_t nodes = 0; // nodes holding those devices
  hardware::NodeTopology node_topology = hardware::NodeTopology::switch_;
  std::int64_t devices_per_nic = 1;
  LinkModel device_link; // switch/pcie: device <-> node switch (two per route); mesh: one pair's link;
                         // ring: one neighbour link (one per hop)
  LinkModel nic_link;    // NIC <-> network, each direction; two hops per route
  LinkModel fabric_link; // every fat-tree link, each direction (latency: per hop)
  FatTreeShape fabric;
  hardware::CommInterference interference;  // the device's, for the engine
  hardware::SpeedVariation speed_variation; // the device's, for the engine
  double in_network_efficiency = 0.0;       // the node switch reduces (NVLS) when > 0
  std::int32_t in_network_channels = 16;    // NCCL's channels for it (hardware::NodeSpec)
  double network_in_network_efficiency = 0; // the scale-out switches reduce (SHARP) when > 0
  RoutedFabric routed;                      // kind none: the SimGrid fat tree `fabric` above
  hardware::CrossRail cross_rail = hardware::CrossRail::pxn;

  [[nodiscard]] std::int64_t node_of(std::int64_t device) const { return device / devices_per_node; }
  [[nodiscard]] std::int64_t nics_per_node() const { return devices_per_node / devices_per_nic; }
  /// Links a message crosses from `a` to `b` of one node (a != b): 2 through a switch, 1 on a mesh,
  /// the shorter way round on a ring.
  [[nodiscard]] int node_hops(std::int64_t a, std::int64_t b) const;
  [[nodiscard]] bool same_node(std::int64_t a, std::int64_t b) const { return node_of(a) == node_of(b); }
  /// End-to-end latency of one message from `a` to `b` (a != b) on an idle network.
  [[nodiscard]] units::Seconds route_latency(std::int64_t a, std::int64_t b) const;
  /// Bandwidth of the narrowest link between `a` and `b` (a != b) on an idle network.
  [[nodiscard]] units::ByteRate route_bandwidth(std::int64_t a, std::int64_t b) const;

  // Routed networks (is_routed()): one link table for the whole platform, [node links of node 0,
  // 1, ...] [NICs of node 0, 1, ...] [fabric links], and the route of every flow through it.
  [[nodiscard]] bool is_routed() const { return routed.kind != FabricKind::none; }
  /// Node interconnect links per node: switch/pcie one per device, mesh one per pair, ring one per neighbour pair.
  [[nodiscard]] std::int64_t node_link_count() const;
  [[nodiscard]] std::int64_t link_count() const;
  [[nodiscard]] LinkModel link_model(std::int64_t link) const;
  [[nodiscard]] std::int64_t nic_link_index(std::int64_t node, std::int64_t nic) const;
  /// The links from device `a` to device `b` (a != b), `flow` distinguishing flows of one pair for ECMP.
  [[nodiscard]] std::vector<Hop> route(std::int64_t a, std::int64_t b, std::uint64_t flow = 0) const;
  /// The rail of a device: the index of its NIC within its node.
  [[nodiscard]] std::int64_t rail_of(std::int64_t device) const {
    return (device % devices_per_node) / devices_per_nic;
  }
};

/// Builds the topology for the first `devices` devices of `cluster` (devices are placed in
/// node order: device i sits in node i / devices_per_node). Nodes beyond those are not
/// simulated: they carry no traffic of this job.
[[nodiscard]] Topology build_topology(const hardware::ClusterSpec& cluster, std::int64_t devices);

} // namespace twocs::platform
