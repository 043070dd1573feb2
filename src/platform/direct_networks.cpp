// Tori and dragonflies, and the link table and routes of every routed fabric.
#include <twocs/platform/routed_fabric.hpp>

#include <algorithm>
#include <cassert>
#include <stdexcept>

namespace twocs::platform {
namespace detail {
std::int64_t tree_link_count(const RoutedFabric& f);
LinkModel tree_link_model(const RoutedFabric& f, std::int64_t link);
void tree_route(const RoutedFabric& f, std::int64_t node_a, std::int64_t rail_a, std::int64_t node_b,
                std::int64_t rail_b, std::uint64_t hash, std::int64_t offset, std::vector<Hop>& out);
} // namespace detail

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

std::int64_t torus_nodes(const RoutedFabric& f) {
  std::int64_t n = 1;
  for (const std::int64_t d : f.torus_dimensions) n *= d;
  return n;
}
std::int64_t stride(const RoutedFabric& f, std::size_t dim) {
  std::int64_t s = 1;
  for (std::size_t i = 0; i < dim; ++i) s *= f.torus_dimensions[i];
  return s;
}

/// Dimension-order routing on a torus (Dally & Seitz, "Deadlock-free message routing in
/// multiprocessor interconnection networks", IEEE TC 1987; the TPU v4 ICI routes the same way):
/// correct x, then y, then z, each the shorter way round the ring, forward on a tie. Link
/// `node * D + dim` joins `node` (first end) to its successor along `dim` (second end).
void torus_route(const RoutedFabric& f, std::int64_t a, std::int64_t b, std::int64_t offset, std::vector<Hop>& out) {
  const auto dims = static_cast<std::int64_t>(f.torus_dimensions.size());
  std::int64_t at = a;
  for (std::size_t d = 0; d < f.torus_dimensions.size(); ++d) {
    const std::int64_t size = f.torus_dimensions[d], step = stride(f, d);
    const std::int64_t from = f.coordinate(at, d), to = f.coordinate(b, d);
    const std::int64_t forward = (to - from + size) % size;
    const bool go_forward = forward <= size - forward;
    const std::int64_t steps = go_forward ? forward : size - forward;
    for (std::int64_t s = 0; s < steps; ++s) {
      const std::int64_t c = f.coordinate(at, d);
      const std::int64_t next = go_forward ? (c + 1) % size : (c + size - 1) % size;
      const std::int64_t next_node = at + (next - c) * step;
      const std::int64_t owner = go_forward ? at : next_node; // the link belongs to its first end
      out.push_back({offset + owner * dims + static_cast<std::int64_t>(d), go_forward});
      at = next_node;
    }
  }
  assert(at == b);
}

std::int64_t local_pairs(const RoutedFabric& f) { return f.routers_per_group * (f.routers_per_group - 1) / 2; }
std::int64_t pair_index(std::int64_t lo, std::int64_t hi, std::int64_t n) {
  return lo * (2 * n - lo - 1) / 2 + hi - lo - 1;
}
/// The router of group g that holds the global link towards group h: the other groups in turn,
/// dealt round the group's routers (the "consecutive" arrangement of Kim et al. 2008, section 3).
std::int64_t gateway(const RoutedFabric& f, std::int64_t g, std::int64_t h) {
  return ((h - g - 1 + f.groups) % f.groups) % f.routers_per_group;
}
void local_hop(const RoutedFabric& f, std::int64_t group, std::int64_t x, std::int64_t y, std::int64_t offset,
               std::vector<Hop>& out) {
  if (x == y) return;
  const std::int64_t lo = std::min(x, y), hi = std::max(x, y);
  out.push_back({offset + group * local_pairs(f) + pair_index(lo, hi, f.routers_per_group), x < y});
}

/// Minimal routing on a dragonfly (Kim, Dally, Scott & Abts, "Technology-Driven, Highly-Scalable
/// Dragonfly Topology", ISCA 2008): a local link to the router holding the global link towards
/// the destination's group, that global link, a local link to the destination's router.
void dragonfly_route(const RoutedFabric& f, std::int64_t a, std::int64_t b, std::int64_t offset,
                     std::vector<Hop>& out) {
  const std::int64_t ra = a / f.nodes_per_router, rb = b / f.nodes_per_router;
  if (ra == rb) return;
  const std::int64_t ga = ra / f.routers_per_group, gb = rb / f.routers_per_group;
  const std::int64_t xa = ra % f.routers_per_group, xb = rb % f.routers_per_group;
  if (ga == gb) return local_hop(f, ga, xa, xb, offset, out);
  local_hop(f, ga, xa, gateway(f, ga, gb), offset, out);
  const std::int64_t lo = std::min(ga, gb), hi = std::max(ga, gb);
  out.push_back({offset + f.groups * local_pairs(f) + pair_index(lo, hi, f.groups), ga < gb});
  local_hop(f, gb, gateway(f, gb, ga), xb, offset, out);
}

} // namespace

RoutedFabric torus_fabric(const hardware::NetworkSpec& network, LinkModel link) {
  RoutedFabric f;
  f.kind = FabricKind::torus;
  f.link = link;
  f.torus_dimensions = network.torus_dimensions;
  if (f.torus_dimensions.empty()) throw std::invalid_argument("build_topology: a torus needs torus_dimensions");
  f.nodes = torus_nodes(f);
  return f;
}

RoutedFabric dragonfly_fabric(const hardware::NetworkSpec& network, std::int64_t cluster_nodes, LinkModel link) {
  RoutedFabric f;
  f.kind = FabricKind::dragonfly;
  f.link = link;
  f.nodes = cluster_nodes;
  f.nodes_per_router = network.nodes_per_switch;
  f.routers_per_group = network.switches_per_group;
  if (f.routers_per_group < 1) throw std::invalid_argument("build_topology: a dragonfly needs switches_per_group");
  f.groups = ceil_div(cluster_nodes, f.nodes_per_router * f.routers_per_group);
  return f;
}

std::int64_t RoutedFabric::coordinate(std::int64_t node, std::size_t dim) const {
  return (node / stride(*this, dim)) % torus_dimensions[dim];
}

std::int64_t RoutedFabric::link_count() const {
  switch (kind) {
  case FabricKind::tree: return detail::tree_link_count(*this);
  case FabricKind::torus: return torus_nodes(*this) * static_cast<std::int64_t>(torus_dimensions.size());
  case FabricKind::dragonfly: return groups * local_pairs(*this) + groups * (groups - 1) / 2;
  default: return 0;
  }
}

LinkModel RoutedFabric::link_model(std::int64_t id) const {
  assert(id >= 0 && id < link_count());
  return kind == FabricKind::tree ? detail::tree_link_model(*this, id) : link;
}

void RoutedFabric::route(std::int64_t node_a, std::int64_t rail_a, std::int64_t node_b, std::int64_t rail_b,
                         std::uint64_t hash, std::int64_t offset, std::vector<Hop>& out) const {
  switch (kind) {
  case FabricKind::tree: return detail::tree_route(*this, node_a, rail_a, node_b, rail_b, hash, offset, out);
  case FabricKind::torus: return torus_route(*this, node_a, node_b, offset, out);
  case FabricKind::dragonfly: return dragonfly_route(*this, node_a, node_b, offset, out);
  default: assert(false);
  }
}

std::pair<std::int64_t, std::int64_t> RoutedFabric::link_ends(std::int64_t id) const {
  assert(id >= 0 && id < link_count());
  if (kind == FabricKind::torus) {
    const auto dims = static_cast<std::int64_t>(torus_dimensions.size());
    const std::int64_t node = id / dims;
    const auto d = static_cast<std::size_t>(id % dims);
    const std::int64_t c = coordinate(node, d);
    return {node, node + ((c + 1) % torus_dimensions[d] - c) * stride(*this, d)};
  }
  assert(kind == FabricKind::dragonfly);
  const std::int64_t locals = groups * local_pairs(*this);
  const auto unpair = [](std::int64_t index, std::int64_t n) {
    std::int64_t lo = 0;
    while (index >= n - lo - 1) index -= n - lo - 1, ++lo;
    return std::pair<std::int64_t, std::int64_t>{lo, lo + 1 + index};
  };
  if (id < locals) {
    const std::int64_t g = id / local_pairs(*this);
    const auto [x, y] = unpair(id % local_pairs(*this), routers_per_group);
    return {g * routers_per_group + x, g * routers_per_group + y};
  }
  const auto [g, h] = unpair(id - locals, groups);
  return {g * routers_per_group + gateway(*this, g, h), h * routers_per_group + gateway(*this, h, g)};
}

} // namespace twocs::platform
