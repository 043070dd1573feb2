#include "platform_builder.hpp"

#include <algorithm>
#include <cassert>
#include <string>
#include <utility>

#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

namespace twocs::engine::detail {
namespace {

namespace sg = simgrid::s4u;
using simgrid::kernel::routing::NetPoint;
using Direction = sg::LinkInRoute::Direction;

/// What the fat tree needs of a leaf: the node zone and its gateway.
using Leaf = std::pair<NetPoint*, NetPoint*>;

struct Device {
  sg::Host* host;
  sg::SplitDuplexLink* device_link; // to the node switch
  sg::SplitDuplexLink* nic;         // to the network
};

sg::SplitDuplexLink* make_link(sg::NetZone* zone, const std::string& name, const platform::LinkModel& model) {
  auto* link = zone->create_split_duplex_link(name, model.bandwidth.value());
  link->set_latency(model.latency.value());
  return link;
}

/// Routes of a node zone (a full zone, one route per ordered pair): device a -> device b crosses
/// a's link up and b's link down (two hops of half the node latency each, like a message
/// through an NVSwitch); device -> gateway crosses its NIC up, gateway -> device its NIC down.
void add_node_routes(sg::NetZone* zone, const std::vector<Device>& devices, NetPoint* gateway) {
  for (const Device& a : devices) {
    for (const Device& b : devices) {
      if (a.host == b.host) continue;
      zone->add_route(a.host->get_netpoint(), b.host->get_netpoint(), nullptr, nullptr,
                      {{a.device_link, Direction::UP}, {b.device_link, Direction::DOWN}}, false);
    }
    zone->add_route(a.host->get_netpoint(), gateway, nullptr, nullptr, {{a.nic, Direction::UP}}, false);
    zone->add_route(gateway, a.host->get_netpoint(), nullptr, nullptr, {{a.nic, Direction::DOWN}}, false);
  }
}

/// The zone of fat-tree leaf `node`: its devices (none for a padding leaf beyond the job's
/// nodes) and a router as gateway into the fabric.
Leaf build_node_zone(const platform::Topology& topology, sg::NetZone* fabric, std::int64_t node,
                     std::vector<sg::Host*>& hosts) {
  const std::string prefix = "node" + std::to_string(node);
  auto* zone = sg::create_full_zone(prefix);
  zone->set_parent(fabric);
  NetPoint* gateway = zone->create_router(prefix + ".gw");
  const std::int64_t first = node * topology.devices_per_node;
  const std::int64_t last = std::min(first + topology.devices_per_node, topology.devices);
  std::vector<Device> devices;
  for (std::int64_t d = first; d < last; ++d) {
    const std::string name = "dev" + std::to_string(d);
    auto* host = zone->create_host(name, pstate_speeds(topology.interference));
    devices.push_back({host, make_link(zone, name + ".link", topology.device_link),
                       make_link(zone, name + ".nic", topology.nic_link)});
    hosts[static_cast<std::size_t>(d)] = host;
  }
  add_node_routes(zone, devices, gateway);
  zone->seal();
  return {zone->get_netpoint(), gateway};
}

} // namespace

std::vector<double> pstate_speeds(const hardware::CommInterference& interference) {
  const double slowdown = interference.compute_slowdown;
  assert(slowdown >= 0);
  if (slowdown <= 0) return {host_speed};
  return {host_speed, host_speed / (1.0 + slowdown)};
}

std::vector<sg::Host*> build_platform(const platform::Topology& topology) {
  assert(topology.devices >= 1 && topology.nodes * topology.devices_per_node >= topology.devices);
  std::vector<sg::Host*> hosts(static_cast<std::size_t>(topology.devices), nullptr);
  auto* root = sg::create_full_zone("twocs");
  const auto leaf = [&](sg::NetZone* fabric, const std::vector<unsigned long>& /*coord*/, unsigned long id) {
    return build_node_zone(topology, fabric, static_cast<std::int64_t>(id), hosts);
  };
  const platform::FatTreeShape& shape = topology.fabric;
  const sg::FatTreeParams params(shape.levels, shape.down, shape.up, shape.parallel);
  auto* fabric = sg::create_fatTree_zone("fabric", root, params, sg::ClusterCallbacks(leaf),
                                         topology.fabric_link.bandwidth.value(), topology.fabric_link.latency.value(),
                                         sg::Link::SharingPolicy::SPLITDUPLEX);
  fabric->seal();
  root->seal();
  assert(std::none_of(hosts.begin(), hosts.end(), [](const sg::Host* h) { return h == nullptr; }));
  return hosts;
}

} // namespace twocs::engine::detail
