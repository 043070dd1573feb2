// Fat trees routed flow by flow: plain or rail-optimized, ideal (bundled tiers) or ECMP.
#include <twocs/platform/routed_fabric.hpp>

#include <algorithm>
#include <cassert>
#include <cmath>

namespace twocs::platform {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Link table of a tree: [port links: one per node, plain trees only] [leaf uplinks] [core links].
// ECMP: p1 uplinks per leaf (uplink i of leaf l joins it to spine or aggregation switch i) and
// p2 core links per aggregation switch (pod P's switch i, link j to core switch (i, j)). Ideal:
// one bundle per leaf (p1 links) and one per pod (p1 p2 links), so no two flows ever collide
// on a tier where the real fabric has enough parallel links for both.
std::int64_t port_links(const RoutedFabric& f) { return f.rails == 1 ? f.nodes : 0; }
std::int64_t uplinks(const RoutedFabric& f) {
  if (f.levels < 2) return 0;
  return f.leaves * (f.ecmp ? f.p1 : 1);
}
std::int64_t pods(const RoutedFabric& f) { return f.levels < 3 ? 0 : ceil_div(f.leaves, f.pod_leaves); }
std::int64_t core_links(const RoutedFabric& f) { return pods(f) * (f.ecmp ? f.p1 * f.p2 : 1); }

} // namespace

std::uint64_t ecmp_hash(std::int64_t src, std::int64_t dst, std::uint64_t flow, std::uint64_t seed) {
  // splitmix64 (Steele, Lea & Flood 2014) applied to each field in turn.
  auto mix = [](std::uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30U)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27U)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31U);
  };
  std::uint64_t h = mix(seed);
  h = mix(h ^ static_cast<std::uint64_t>(src));
  h = mix(h ^ static_cast<std::uint64_t>(dst));
  return mix(h ^ flow);
}

RoutedFabric tree_fabric(const hardware::NetworkSpec& network, std::int64_t nodes, std::int64_t nics, LinkModel link) {
  RoutedFabric f;
  f.kind = FabricKind::tree;
  f.link = link;
  f.nodes = nodes;
  f.rails = network.topology == hardware::NetworkTopology::rail_fat_tree ? nics : 1;
  f.leaf_radix = network.nodes_per_switch;
  f.leaves = ceil_div(nodes, f.leaf_radix) * f.rails;
  f.ecmp = network.routing == hardware::Routing::ecmp;
  f.ecmp_seed = network.ecmp_seed;
  // Oversubscription per level (Leiserson 1985): k links down and p1 = round(k / o1) up at a leaf,
  // a down and p2 = round(a / o2) up at an aggregation switch (as the SimGrid tree, topology.cpp).
  f.p1 = std::max<long>(1, std::lround(static_cast<double>(f.leaf_radix) / network.oversubscription));
  // A rail-optimized tree always has its spine: cross-rail traffic may need it (DGX SuperPOD).
  f.levels = f.leaves > 1 ? 2 : 1;
  // A pod holds switches_per_pod groups of nodes, all their rails: as many nodes as a plain tree's
  // pod, so that switching a platform to rails keeps its pods. Its aggregation switches each have
  // one link down to every leaf of the pod and p2 = round(leaves / o2) up.
  const std::int64_t pod_leaves = network.switches_per_pod * f.rails;
  if (network.switches_per_pod > 0 && f.leaves > pod_leaves) {
    f.levels = 3;
    f.pod_leaves = pod_leaves;
    f.p2 = std::max<long>(1, std::lround(static_cast<double>(f.pod_leaves) / network.upper_oversubscription));
  }
  return f;
}

std::int64_t RoutedFabric::leaf_of(std::int64_t node, std::int64_t rail) const {
  return (node / leaf_radix) * rails + rail;
}

namespace detail {

std::int64_t tree_link_count(const RoutedFabric& f) { return port_links(f) + uplinks(f) + core_links(f); }

LinkModel tree_link_model(const RoutedFabric& f, std::int64_t link) {
  assert(link >= 0 && link < tree_link_count(f));
  if (f.ecmp || link < port_links(f)) return f.link;
  // An ideal tier is one bundle of its parallel links.
  const double width = link < port_links(f) + uplinks(f) ? static_cast<double>(f.p1) : static_cast<double>(f.p1 * f.p2);
  return {f.link.bandwidth * width, f.link.latency};
}

void tree_route(const RoutedFabric& f, std::int64_t node_a, std::int64_t rail_a, std::int64_t node_b,
                std::int64_t rail_b, std::uint64_t hash, std::int64_t offset, std::vector<Hop>& out) {
  const std::int64_t leaf_a = f.leaf_of(node_a, rail_a), leaf_b = f.leaf_of(node_b, rail_b);
  const std::int64_t ports = port_links(f);
  if (ports > 0) out.push_back({offset + node_a, true});
  if (leaf_a != leaf_b) {
    // ECMP: the leaf hashes the flow onto one of its p1 uplinks, the aggregation switch onto one
    // of its p2; the way down is then fixed (the destination's leaf hangs below each spine).
    const auto i = f.ecmp ? static_cast<std::int64_t>(hash % static_cast<std::uint64_t>(f.p1)) : 0;
    const auto j =
        f.ecmp ? static_cast<std::int64_t>((hash / static_cast<std::uint64_t>(f.p1)) % static_cast<std::uint64_t>(f.p2))
               : 0;
    const std::int64_t width = f.ecmp ? f.p1 : 1;
    const std::int64_t up_a = offset + ports + leaf_a * width + i, up_b = offset + ports + leaf_b * width + i;
    out.push_back({up_a, true});
    const std::int64_t pod_a = f.levels < 3 ? 0 : leaf_a / f.pod_leaves,
                       pod_b = f.levels < 3 ? 0 : leaf_b / f.pod_leaves;
    if (pod_a != pod_b) {
      const std::int64_t base = offset + ports + uplinks(f);
      const std::int64_t per_pod = f.ecmp ? f.p1 * f.p2 : 1;
      const std::int64_t within = f.ecmp ? i * f.p2 + j : 0;
      out.push_back({base + pod_a * per_pod + within, true});
      out.push_back({base + pod_b * per_pod + within, false});
    }
    out.push_back({up_b, false});
  }
  if (ports > 0) out.push_back({offset + node_b, false});
}

} // namespace detail
} // namespace twocs::platform
