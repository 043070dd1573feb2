// The simulated platform as a pure description: which links exist, their bandwidth and
// latency, and the shape of the inter-node fabric. The engine instantiates it in SimGrid;
// nothing here depends on SimGrid, so the topology is testable on its own.
//
// Structure (docs/platform-model.md):
//   node zone: each device has a full-duplex link to the node switch (NVLink/NVSwitch class)
//              and its own full-duplex NIC into the network;
//   network:   a fat tree (SimGrid PGFT) whose leaves are nodes; a node's leaf link carries the
//              aggregate of its devices' NICs, upper levels are thinned by the oversubscription.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <twocs/hardware/cluster.hpp>
#include <twocs/units/quantity.hpp>

namespace twocs::platform {

/// One direction of a full-duplex link.
struct LinkModel {
  units::ByteRate bandwidth;
  units::Seconds latency;
};

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
};

struct Topology {
  std::string name;
  std::int64_t devices = 0; // devices simulated (the world size)
  std::int64_t devices_per_node = 1;
  std::int64_t nodes = 0; // nodes holding those devices
  LinkModel device_link;  // device <-> node switch, each direction; two hops per route
  LinkModel nic_link;     // device NIC <-> network, each direction; two hops per route
  LinkModel fabric_link;  // every fat-tree link, each direction
  FatTreeShape fabric;
  hardware::CommInterference interference; // the device's, for the engine

  [[nodiscard]] std::int64_t node_of(std::int64_t device) const { return device / devices_per_node; }
  [[nodiscard]] bool same_node(std::int64_t a, std::int64_t b) const { return node_of(a) == node_of(b); }
  /// End-to-end latency of one message from `a` to `b` (a != b) on an idle network.
  [[nodiscard]] units::Seconds route_latency(std::int64_t a, std::int64_t b) const;
  /// Bandwidth of the narrowest link between `a` and `b` (a != b) on an idle network.
  [[nodiscard]] units::ByteRate route_bandwidth(std::int64_t a, std::int64_t b) const;
};

/// Builds the topology for the first `devices` devices of `cluster` (devices are placed in
/// node order: device i sits in node i / devices_per_node). Nodes beyond those are not
/// simulated: they carry no traffic of this job.
[[nodiscard]] Topology build_topology(const hardware::ClusterSpec& cluster, std::int64_t devices);

} // namespace twocs::platform
