// Cluster networks whose routes twocs computes itself, flow by flow: the rail-optimized fat
// tree, fat trees with ECMP routing, 2D/3D tori and dragonflies (docs/network.md, section 2).
// SimGrid's own fat-tree zone routes by destination (D-mod-K) and cannot hash flows or give
// each rail its own leaf switch, so the engine asks this description for every route instead.
// Pure: nothing here depends on SimGrid.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <twocs/hardware/cluster.hpp>
#include <twocs/units/quantity.hpp>

namespace twocs::platform {

/// One direction of a full-duplex link.
struct LinkModel {
  units::ByteRate bandwidth;
  units::Seconds latency;
};

/// One link of a route: its index in a link table, and the direction crossed (`up`: from the
/// link's first end to its second; see each fabric for which end is which).
struct Hop {
  std::int64_t link = 0;
  bool up = true;
};

/// Deterministic ECMP hash of a flow: the splitmix64 finaliser (Steele, Lea & Flood, "Fast
/// splittable pseudorandom number generators", OOPSLA 2014) over (src, dst, flow, seed), standing
/// for a switch's hash of the 5-tuple (docs/network.md, ECMP).
[[nodiscard]] std::uint64_t ecmp_hash(std::int64_t src, std::int64_t dst, std::uint64_t flow, std::uint64_t seed);

enum class FabricKind { none, tree, torus, dragonfly };

/// The switch-level part of a routed network: which links exist between switches (or torus
/// nodes), their bandwidth, and the route between two ports. A port is a node (fat tree, torus,
/// dragonfly) or one NIC's rail of a node (rail-optimized fat tree).
struct RoutedFabric {
  FabricKind kind = FabricKind::none;
  LinkModel link; // every fabric link, each direction (an ideal tree's bundles carry several)

  // Fat tree (plain or rail-optimized): leaves of `leaf_radix` nodes; `p1` uplinks per leaf to the
  // spine (two levels) or the pod's aggregation switches (three), `p2` per aggregation switch to
  // the core; pods of `pod_leaves` leaf switches. Rail-optimized: one leaf per rail per group.
  std::int64_t nodes = 0; // nodes of the job (ports of a plain tree)
  std::int64_t rails = 1; // leaf switches per group of nodes (1: a plain fat tree)
  std::int64_t leaf_radix = 1;
  std::int64_t leaves = 1;
  std::int64_t pod_leaves = 0;
  unsigned levels = 1;
  std::int64_t p1 = 1;
  std::int64_t p2 = 1;
  bool ecmp = false;
  std::uint64_t ecmp_seed = 0;

  std::vector<std::int64_t> torus_dimensions; // torus: nodes per dimension, x fastest

  std::int64_t nodes_per_router = 1; // dragonfly
  std::int64_t routers_per_group = 1;
  std::int64_t groups = 1;

  [[nodiscard]] std::int64_t link_count() const;
  [[nodiscard]] LinkModel link_model(std::int64_t link) const;
  /// Appends the fabric links from port (node_a, rail_a) to port (node_b, rail_b) to `out`, each
  /// index shifted by `offset`; `hash` picks among equal-cost paths when ECMP is on.
  void route(std::int64_t node_a, std::int64_t rail_a, std::int64_t node_b, std::int64_t rail_b, std::uint64_t hash,
             std::int64_t offset, std::vector<Hop>& out) const;
  /// Leaf switch of a port (fat trees).
  [[nodiscard]] std::int64_t leaf_of(std::int64_t node, std::int64_t rail) const;
  /// Torus: the vertices (nodes) a link joins, `up` from first to second; dragonfly: routers.
  [[nodiscard]] std::pair<std::int64_t, std::int64_t> link_ends(std::int64_t link) const;
  /// Torus: coordinate of `node` along dimension `dim`.
  [[nodiscard]] std::int64_t coordinate(std::int64_t node, std::size_t dim) const;
};

/// A plain or rail-optimized fat tree over `nodes` nodes of `nics` NICs each (rails = nics when
/// rail-optimized), every link of bandwidth `link` (an ideal tree bundles each tier's links).
[[nodiscard]] RoutedFabric tree_fabric(const hardware::NetworkSpec& network, std::int64_t nodes, std::int64_t nics,
                                       LinkModel link);
/// A torus of network.torus_dimensions (their product: the cluster's nodes).
[[nodiscard]] RoutedFabric torus_fabric(const hardware::NetworkSpec& network, LinkModel link);
/// A dragonfly of `cluster_nodes` nodes, network.nodes_per_switch per router, network.switches_per_group
/// routers per group, one global link between every two groups.
[[nodiscard]] RoutedFabric dragonfly_fabric(const hardware::NetworkSpec& network, std::int64_t cluster_nodes,
                                            LinkModel link);

} // namespace twocs::platform
