#include "platform_builder.hpp"

#include <algorithm>
#include <cassert>
#include <string>
#include <utility>

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

namespace twocs::engine::detail {
namespace {

namespace sg = simgrid::s4u;
using simgrid::kernel::routing::NetPoint;
using Direction = sg::LinkInRoute::Direction;
using hardware::NodeTopology;

/// What the fat tree needs of a leaf: the node zone (or a router for a spare leaf) and its gateway.
using Leaf = std::pair<NetPoint*, NetPoint*>;

/// The links of one node, made before any zone below the root exists (see build_platform).
struct NodeLinks {
  std::vector<sg::SplitDuplexLink*> fabric; // switch/pcie: per device; mesh: per pair a < b; ring: i -> i + 1
  std::vector<sg::SplitDuplexLink*> nics;   // per NIC
};

sg::SplitDuplexLink* make_link(sg::NetZone* zone, const std::string& name, const platform::LinkModel& model) {
  auto* link = zone->create_split_duplex_link(name, model.bandwidth.value());
  link->set_latency(model.latency.value());
  return link;
}

std::size_t node_link_count(const platform::Topology& t) {
  const auto g = static_cast<std::size_t>(t.devices_per_node);
  switch (t.node_topology) {
  case NodeTopology::mesh: return g * (g - 1) / 2;
  case NodeTopology::ring: return g > 2 ? g : g - 1;
  default: return g;
  }
}

NodeLinks make_node_links(sg::NetZone* zone, const platform::Topology& t, std::int64_t node) {
  const std::string prefix = "node" + std::to_string(node) + ".";
  NodeLinks links;
  for (std::size_t i = 0; i < node_link_count(t); ++i)
    links.fabric.push_back(make_link(zone, prefix + "link" + std::to_string(i), t.device_link));
  for (std::int64_t i = 0; i < t.nics_per_node(); ++i)
    links.nics.push_back(make_link(zone, prefix + "nic" + std::to_string(i), t.nic_link));
  return links;
}

/// Links from local device a to local device b (a != b) of a node with g devices.
std::vector<sg::LinkInRoute> node_route(const platform::Topology& t, const NodeLinks& links, std::int64_t a,
                                        std::int64_t b) {
  const std::int64_t g = t.devices_per_node;
  const auto at = [&](std::int64_t i) { return links.fabric[static_cast<std::size_t>(i)]; };
  switch (t.node_topology) {
  case NodeTopology::mesh: { // pair (lo, hi) at index lo (2g - lo - 1) / 2 + hi - lo - 1; UP is lo -> hi
    const std::int64_t lo = std::min(a, b), hi = std::max(a, b);
    return {{at(lo * (2 * g - lo - 1) / 2 + hi - lo - 1), a < b ? Direction::UP : Direction::DOWN}};
  }
  case NodeTopology::ring: { // the shorter way round; link i joins i and i + 1 (UP is forward)
    std::vector<sg::LinkInRoute> route;
    const std::int64_t forward = (b - a + g) % g;
    if (forward <= g - forward)
      for (std::int64_t i = a; i != b; i = (i + 1) % g) route.emplace_back(at(g > 2 ? i : 0), Direction::UP);
    else
      for (std::int64_t i = a; i != b; i = (i + g - 1) % g)
        route.emplace_back(at(g > 2 ? (i + g - 1) % g : 0), Direction::DOWN);
    return route;
  }
  default: return {{at(a), Direction::UP}, {at(b), Direction::DOWN}};
  }
}

/// Routes of a node zone (a full zone, one route per ordered pair) and between each device and
/// the gateway (through the device's NIC, shared by devices_per_nic devices).
void add_node_routes(sg::NetZone* zone, const platform::Topology& t, const NodeLinks& links,
                     const std::vector<sg::Host*>& devices, NetPoint* gateway) {
  for (std::size_t a = 0; a < devices.size(); ++a) {
    for (std::size_t b = 0; b < devices.size(); ++b)
      if (a != b)
        zone->add_route(devices[a]->get_netpoint(), devices[b]->get_netpoint(), nullptr, nullptr,
                        node_route(t, links, static_cast<std::int64_t>(a), static_cast<std::int64_t>(b)), false);
    sg::SplitDuplexLink* nic = links.nics[a / static_cast<std::size_t>(t.devices_per_nic)];
    zone->add_route(devices[a]->get_netpoint(), gateway, nullptr, nullptr, {{nic, Direction::UP}}, false);
    zone->add_route(gateway, devices[a]->get_netpoint(), nullptr, nullptr, {{nic, Direction::DOWN}}, false);
  }
}

/// The zone of fat-tree leaf `node`: its devices and a router as gateway into the fabric. A spare
/// leaf beyond the job's nodes is a bare router: it carries no traffic and costs no zone.
Leaf build_node_zone(const platform::Topology& t, const std::vector<NodeLinks>& links, sg::NetZone* fabric,
                     std::int64_t node, std::vector<sg::Host*>& hosts) {
  const std::string prefix = "node" + std::to_string(node);
  if (node >= t.nodes || links[static_cast<std::size_t>(node)].nics.empty())
    return {fabric->create_router(prefix), nullptr};
  auto* zone = sg::create_full_zone(prefix);
  zone->set_parent(fabric);
  NetPoint* gateway = zone->create_router(prefix + ".gw");
  const std::int64_t first = node * t.devices_per_node;
  const std::int64_t last = std::min(first + t.devices_per_node, t.devices);
  std::vector<sg::Host*> devices;
  for (std::int64_t d = first; d < last; ++d) {
    devices.push_back(zone->create_host("dev" + std::to_string(d), pstate_speeds(t.interference)));
    hosts[static_cast<std::size_t>(d)] = devices.back();
  }
  add_node_routes(zone, t, links[static_cast<std::size_t>(node)], devices, gateway);
  zone->seal();
  return {zone->get_netpoint(), gateway};
}

/// The one zone of a routed network (platform/routed_fabric.hpp): every device is a host of it and
/// every link one of its links; SimGrid asks it for each route and it asks the topology, so the
/// build is linear in links and routes cost only when a flow needs them. A zone of SimGrid's own
/// kinds cannot do this: routes there are per pair of zones (a node's flows all take one path).
class RoutedZone final : public simgrid::kernel::routing::NetZoneImpl {
public:
  RoutedZone(const std::string& name, platform::Topology topology)
      : NetZoneImpl(name), topology_(std::move(topology)) {}

  std::vector<sg::SplitDuplexLink*> links; // by the topology's link index; null where no used device needs it
  std::vector<std::int64_t> device_of;     // by the host's netpoint id

  void get_local_route(const NetPoint* src, const NetPoint* dst, simgrid::kernel::routing::Route* into,
                       double* latency) override {
    const auto hops = topology_.route(device_of.at(src->id()), device_of.at(dst->id()));
    std::vector<sg::LinkInRoute> path;
    path.reserve(hops.size());
    for (const platform::Hop& hop : hops) {
      sg::SplitDuplexLink* link = links.at(static_cast<std::size_t>(hop.link));
      assert(link != nullptr);
      path.emplace_back(link, hop.up ? Direction::UP : Direction::DOWN);
      if (latency != nullptr) *latency += link->get_latency();
    }
    const auto impl = get_link_list_impl(path, false);
    into->link_list_.insert(into->link_list_.end(), impl.begin(), impl.end());
  }

private:
  platform::Topology topology_;
};

std::vector<sg::Host*> build_routed_platform(const platform::Topology& t, const std::vector<bool>& used) {
  auto* root = sg::create_full_zone("twocs");
  auto* zone = new RoutedZone("network", t); // owned by its parent zone
  zone->set_parent(root->get_impl());
  sg::NetZone* iface = zone->get_iface();
  zone->links.assign(static_cast<std::size_t>(t.link_count()), nullptr);
  const auto is_used = [&](std::int64_t d) { return used.empty() || used[static_cast<std::size_t>(d)]; };
  const std::int64_t node_links = t.node_link_count();
  for (std::int64_t node = 0; node < t.nodes; ++node) {
    bool any = false;
    for (std::int64_t d = node * t.devices_per_node; d < std::min((node + 1) * t.devices_per_node, t.devices); ++d)
      any = any || is_used(d);
    if (!any) continue;
    const std::string prefix = "node" + std::to_string(node) + ".";
    for (std::int64_t i = 0; i < node_links; ++i)
      zone->links[static_cast<std::size_t>(node * node_links + i)] =
          make_link(iface, prefix + "link" + std::to_string(i), t.device_link);
    for (std::int64_t i = 0; i < t.nics_per_node(); ++i)
      zone->links[static_cast<std::size_t>(t.nic_link_index(node, i))] =
          make_link(iface, prefix + "nic" + std::to_string(i), t.nic_link);
  }
  for (std::int64_t id = t.nic_link_index(t.nodes, 0); id < t.link_count(); ++id)
    zone->links[static_cast<std::size_t>(id)] = make_link(iface, "fabric" + std::to_string(id), t.link_model(id));
  std::vector<sg::Host*> hosts(static_cast<std::size_t>(t.devices), nullptr);
  for (std::int64_t d = 0; d < t.devices; ++d) {
    if (!is_used(d)) continue;
    sg::Host* host = iface->create_host("dev" + std::to_string(d), pstate_speeds(t.interference));
    const unsigned long id = host->get_netpoint()->id();
    if (zone->device_of.size() <= id) zone->device_of.resize(id + 1, -1);
    zone->device_of[id] = d;
    hosts[static_cast<std::size_t>(d)] = host;
  }
  iface->seal();
  root->seal();
  return hosts;
}

} // namespace

std::vector<double> pstate_speeds(const hardware::CommInterference& interference) {
  const double interfered = interference.compute_slowdown;
  assert(interfered >= 0);
  if (interfered <= 0) return {host_speed};
  return {host_speed, host_speed / (1.0 + interfered)};
}

std::vector<double> device_slowdowns(const platform::Topology& topology, const std::vector<bool>& computing) {
  std::vector<double> slowdowns(static_cast<std::size_t>(topology.devices), 1.0);
  if (topology.speed_variation.spread <= 0) return slowdowns;
  const bool folded = !computing.empty() && std::find(computing.begin(), computing.end(), false) != computing.end();
  if (folded) {
    std::fill(slowdowns.begin(), slowdowns.end(),
              hardware::expected_max_slowdown(topology.speed_variation, topology.devices));
    return slowdowns;
  }
  for (std::int64_t d = 0; d < topology.devices; ++d)
    slowdowns[static_cast<std::size_t>(d)] = hardware::speed_slowdown(topology.speed_variation, d);
  return slowdowns;
}

std::vector<sg::Host*> build_platform(const platform::Topology& topology, const std::vector<bool>& used) {
  assert(topology.devices >= 1 && topology.nodes * topology.devices_per_node >= topology.devices);
  if (topology.is_routed()) return build_routed_platform(topology, used);
  std::vector<sg::Host*> hosts(static_cast<std::size_t>(topology.devices), nullptr);
  auto* root = sg::create_full_zone("twocs");
  // Every node link first, in the root zone while it has no child zone: SimGrid 3.32 checks each
  // new link's name with a lookup that recurses into every zone, so links made inside the node
  // zones cost O(nodes) each and the build O(nodes^2) (docs/simgrid-notes.md: 3-9 s at 1024 nodes).
  std::vector<NodeLinks> links;
  links.reserve(static_cast<std::size_t>(topology.nodes));
  const auto node_used = [&](std::int64_t node) {
    if (used.empty()) return true;
    const std::int64_t first = node * topology.devices_per_node;
    const std::int64_t last = std::min(first + topology.devices_per_node, topology.devices);
    for (std::int64_t d = first; d < last; ++d)
      if (used[static_cast<std::size_t>(d)]) return true;
    return false;
  };
  for (std::int64_t node = 0; node < topology.nodes; ++node)
    links.push_back(node_used(node) ? make_node_links(root, topology, node) : NodeLinks{});
  const auto leaf = [&](sg::NetZone* fabric, const std::vector<unsigned long>& /*coord*/, unsigned long id) {
    return build_node_zone(topology, links, fabric, static_cast<std::int64_t>(id), hosts);
  };
  const platform::FatTreeShape& shape = topology.fabric;
  const sg::FatTreeParams params(shape.levels, shape.down, shape.up, shape.parallel);
  auto* fabric = sg::create_fatTree_zone("fabric", root, params, sg::ClusterCallbacks(leaf),
                                         topology.fabric_link.bandwidth.value(), topology.fabric_link.latency.value(),
                                         sg::Link::SharingPolicy::SPLITDUPLEX);
  fabric->seal();
  root->seal();
  for (std::size_t d = 0; d < hosts.size(); ++d) assert(hosts[d] != nullptr || (!used.empty() && !used[d]));
  return hosts;
}

} // namespace twocs::engine::detail
