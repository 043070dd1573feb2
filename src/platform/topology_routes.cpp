// Routes of routed networks device to device: the node interconnect, the NICs (with NCCL's PXN
// relay between rails) and the fabric (routed_fabric.hpp).
#include <twocs/platform/known_route.hpp>
#include <twocs/platform/topology.hpp>

#include <algorithm>
#include <cassert>

namespace twocs::platform {
namespace {

/// Links from local device a to local device b (a != b) of one node, as the SimGrid node zone
/// routes them (docs/platform-model.md, section 2).
void node_route(const Topology& t, std::int64_t a, std::int64_t b, std::int64_t base, std::vector<Hop>& out) {
  const std::int64_t g = t.devices_per_node;
  switch (t.node_topology) {
  case hardware::NodeTopology::mesh: { // pair (lo, hi); up is lo -> hi
    const std::int64_t lo = std::min(a, b), hi = std::max(a, b);
    out.push_back({base + lo * (2 * g - lo - 1) / 2 + hi - lo - 1, a < b});
    return;
  }
  case hardware::NodeTopology::ring: { // the shorter way round; link i joins i and i + 1 (up is forward)
    const std::int64_t forward = (b - a + g) % g;
    if (forward <= g - forward)
      for (std::int64_t i = a; i != b; i = (i + 1) % g) out.push_back({base + (g > 2 ? i : 0), true});
    else
      for (std::int64_t i = a; i != b; i = (i + g - 1) % g)
        out.push_back({base + (g > 2 ? (i + g - 1) % g : 0), false});
    return;
  }
  default: out.push_back({base + a, true}); out.push_back({base + b, false});
  }
}

} // namespace

std::int64_t Topology::node_link_count() const {
  const std::int64_t g = devices_per_node;
  switch (node_topology) {
  case hardware::NodeTopology::mesh: return g * (g - 1) / 2;
  case hardware::NodeTopology::ring: return g > 2 ? g : g - 1;
  default: return g;
  }
}

std::int64_t Topology::nic_link_index(std::int64_t node, std::int64_t nic) const {
  return nodes * node_link_count() + node * nics_per_node() + nic;
}

std::int64_t Topology::link_count() const { return nic_link_index(nodes, 0) + routed.link_count(); }

LinkModel Topology::link_model(std::int64_t link) const {
  assert(link >= 0 && link < link_count());
  if (link < nic_link_index(0, 0)) return device_link;
  if (link < nic_link_index(nodes, 0)) return nic_link;
  return routed.link_model(link - nic_link_index(nodes, 0));
}

std::vector<Hop> Topology::route(std::int64_t a, std::int64_t b, std::uint64_t flow) const {
  assert(is_routed() && a != b && a >= 0 && b >= 0 && a < devices && b < devices);
  std::vector<Hop> out;
  const std::int64_t na = node_of(a), nb = node_of(b), g = devices_per_node;
  if (na == nb) {
    node_route(*this, a % g, b % g, na * node_link_count(), out);
    return out;
  }
  const bool rails = routed.kind == FabricKind::tree && routed.rails > 1;
  const std::int64_t nic_a = rail_of(a), nic_b = rail_of(b);
  std::int64_t send_nic = nic_a;
  if (rails && nic_a != nic_b && cross_rail == hardware::CrossRail::pxn) {
    // PXN (NCCL 2.12): the data first crosses the node interconnect to the device on the
    // destination's rail, which sends it through its own NIC, so it never leaves its rail
    // (NVIDIA technical blog, "Doubling all2all Performance with NCCL 2.12", 2022).
    const std::int64_t relay = nic_b * devices_per_nic + (a % g) % devices_per_nic;
    node_route(*this, a % g, relay, na * node_link_count(), out);
    send_nic = nic_b;
  }
  out.push_back({nic_link_index(na, send_nic), true});
  const std::uint64_t hash = routed.ecmp ? ecmp_hash(a, b, flow, routed.ecmp_seed) : 0;
  routed.route(na, rails ? send_nic : 0, nb, rails ? nic_b : 0, hash, nic_link_index(nodes, 0), out);
  out.push_back({nic_link_index(nb, nic_b), false});
  return out;
}

std::vector<Hop> known_route(const Topology& t, std::int64_t a, std::int64_t b) {
  assert(a != b && a >= 0 && b >= 0 && a < t.devices && b < t.devices);
  if (t.is_routed()) return t.route(a, b);
  std::vector<Hop> out;
  const std::int64_t na = t.node_of(a), nb = t.node_of(b), g = t.devices_per_node;
  if (na == nb) {
    node_route(t, a % g, b % g, na * t.node_link_count(), out);
  } else { // the node zone's route to its gateway: the device's NIC (engine/platform_builder.cpp)
    out.push_back({t.nic_link_index(na, t.rail_of(a)), true});
    out.push_back({t.nic_link_index(nb, t.rail_of(b)), false});
  }
  return out;
}

} // namespace twocs::platform
