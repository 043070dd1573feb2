#include <twocs/platform/topology.hpp>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <stdexcept>
#include <string>

namespace twocs::platform {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

void require(bool condition, const std::string& what) {
  if (!condition) throw std::invalid_argument("build_topology: " + what);
}

void check_inputs(const hardware::ClusterSpec& cluster, std::int64_t devices) {
  require(cluster.node.devices >= 1, "node.devices must be at least 1");
  require(cluster.nodes >= 1, "cluster.nodes must be at least 1");
  require(devices >= 1, "the job needs at least one device, got " + std::to_string(devices));
  require(devices <= cluster.device_count(), "the job needs " + std::to_string(devices) +
                                                 " devices but the cluster has " +
                                                 std::to_string(cluster.device_count()));
  require(cluster.node.interconnect.bandwidth.value() > 0, "node.interconnect.bandwidth must be positive");
  require(cluster.network.link.bandwidth.value() > 0, "cluster.network.bandwidth must be positive");
  require(cluster.node.interconnect.latency.value() >= 0, "node.interconnect.latency must not be negative");
  require(cluster.network.link.latency.value() >= 0, "cluster.network.latency must not be negative");
  require(cluster.node.interconnect.efficiency > 0 && cluster.node.interconnect.efficiency <= 1,
          "node.interconnect.efficiency must lie in (0, 1]");
  require(cluster.network.link.efficiency > 0 && cluster.network.link.efficiency <= 1,
          "cluster.network.efficiency must lie in (0, 1]");
  require(cluster.network.oversubscription >= 1, "cluster.network.oversubscription must be at least 1");
  require(cluster.network.nodes_per_switch >= 1, "cluster.network.nodes_per_switch must be at least 1");
  require(cluster.network.devices_per_nic >= 1 && cluster.node.devices % cluster.network.devices_per_nic == 0,
          "cluster.network.devices_per_nic must divide node.devices");
  require(cluster.network.upper_oversubscription >= 1, "cluster.network.upper_oversubscription must be at least 1");
  if (cluster.network.topology == hardware::NetworkTopology::torus) {
    std::int64_t product = 1;
    for (const std::int64_t d : cluster.network.torus_dimensions) product *= d;
    require(!cluster.network.torus_dimensions.empty() && product == cluster.nodes,
            "cluster.network.torus_dimensions must multiply to cluster.nodes");
  }
  if (cluster.network.topology == hardware::NetworkTopology::dragonfly)
    require(cluster.network.switches_per_group >= 1, "cluster.network.switches_per_group must be at least 1");
}

/// The PGFT of the inter-node network (Zahavi, "D-Mod-K Routing Providing Non-Blocking Traffic
/// for Shift Permutations on Real Life Fat Trees", 2010, defines PGFT(h; m; w; p)). One leaf
/// switch when every node fits under it; otherwise two levels: leaf switches of k nodes each,
/// and p spine switches, each linked once to every leaf switch. A leaf switch then has k links
/// down and p links up of equal bandwidth, an oversubscription of k/p (Leiserson 1985 calls
/// this thinning the upper levels of the tree).
/// A third level (Al-Fares et al., "A scalable, commodity data center network architecture",
/// SIGCOMM 2008: pods of leaf and aggregation switches under core switches) once the nodes
/// outgrow one pod: pods of a leaf switches, p1 aggregation switches per pod (each linked to every
/// leaf switch of its pod), and p2 core links up per aggregation switch (oversubscription a / p2).
FatTreeShape three_levels(const hardware::NetworkSpec& network, std::int64_t nodes) {
  const std::int64_t k = network.nodes_per_switch;
  const std::int64_t a = network.switches_per_pod;
  const auto p1 = std::max<long>(1, std::lround(static_cast<double>(k) / network.oversubscription));
  const auto p2 = std::max<long>(1, std::lround(static_cast<double>(a) / network.upper_oversubscription));
  FatTreeShape shape;
  shape.levels = 3;
  shape.down = {static_cast<unsigned>(k), static_cast<unsigned>(a), static_cast<unsigned>(ceil_div(nodes, k * a))};
  shape.up = {1, static_cast<unsigned>(p1), static_cast<unsigned>(p2)};
  shape.parallel = {1, 1, 1};
  return shape;
}

FatTreeShape shape_for(const hardware::NetworkSpec& network, std::int64_t nodes) {
  const std::int64_t k = network.nodes_per_switch;
  FatTreeShape shape;
  if (network.topology == hardware::NetworkTopology::switch_ || nodes <= k) {
    shape.levels = 1;
    shape.down = {static_cast<unsigned>(nodes)};
    shape.up = {1};
    shape.parallel = {1};
    return shape;
  }
  if (network.switches_per_pod > 0 && nodes > k * network.switches_per_pod) return three_levels(network, nodes);
  const std::int64_t m = ceil_div(nodes, k);
  const auto p = std::max<long>(1, std::lround(static_cast<double>(k) / network.oversubscription));
  shape.levels = 2;
  shape.down = {static_cast<unsigned>(k), static_cast<unsigned>(m)};
  shape.up = {1, static_cast<unsigned>(p)};
  shape.parallel = {1, 1};
  return shape;
}

/// Fat-tree links between the leaves of nodes `a` and `b` (a != b): up to their nearest common
/// ancestor and down again, two links per level climbed.
int fabric_hops(const FatTreeShape& fabric, std::int64_t node_a, std::int64_t node_b) {
  assert(node_a != node_b);
  if (fabric.levels == 1) return 2;
  const std::int64_t leaf_radix = fabric.down[0];
  if (node_a / leaf_radix == node_b / leaf_radix) return 2;
  if (fabric.levels == 2) return 4;
  const std::int64_t pod_radix = leaf_radix * fabric.down[1];
  return node_a / pod_radix == node_b / pod_radix ? 4 : 6;
}

/// The node interconnect's links per device, each direction: a mesh splits a device's bandwidth
/// over its g - 1 peers, a ring over its two neighbours (one for two devices).
platform::LinkModel node_link_model(const hardware::NodeSpec& node) {
  const auto& spec = node.interconnect;
  const units::ByteRate sustained = spec.bandwidth * spec.efficiency;
  const double g = static_cast<double>(node.devices);
  switch (node.topology) {
  case hardware::NodeTopology::mesh: return {sustained / std::max(1.0, g - 1), spec.latency};
  case hardware::NodeTopology::ring: return {sustained / (node.devices > 2 ? 2.0 : 1.0), spec.latency};
  default: return {sustained, spec.latency / 2.0};
  }
}

/// Networks SimGrid's fat-tree zone cannot route: rail-optimized trees, ECMP, tori, dragonflies
/// (routed_fabric.hpp). Fabric links keep their line rate, as the fat tree's; by default each
/// carries a node's NICs together (a rail: one NIC), `fabric_bandwidth` sets it.
void route_flow_by_flow(const hardware::ClusterSpec& cluster, Topology& t) {
  const auto& net = cluster.network;
  using hardware::NetworkTopology;
  const bool rail = net.topology == NetworkTopology::rail_fat_tree;
  const bool ecmp_tree = net.topology == NetworkTopology::fat_tree && net.routing == hardware::Routing::ecmp;
  if (!rail && !ecmp_tree && net.topology != NetworkTopology::torus && net.topology != NetworkTopology::dragonfly)
    return;
  const double width = rail ? 1.0 : static_cast<double>(t.nics_per_node());
  LinkModel link{net.link.bandwidth * width, net.hop_latency};
  if (net.fabric_bandwidth.value() > 0) link.bandwidth = net.fabric_bandwidth;
  t.fabric_link = link;
  t.cross_rail = net.cross_rail;
  switch (net.topology) {
  case NetworkTopology::torus: t.routed = torus_fabric(net, link); break;
  case NetworkTopology::dragonfly: t.routed = dragonfly_fabric(net, cluster.nodes, link); break;
  default: t.routed = tree_fabric(net, t.nodes, t.nics_per_node(), link);
  }
  // A rail's leaf switch takes the NIC's own cable: it is the first fabric link crossed.
  if (rail) t.nic_link.latency += net.hop_latency;
}

} // namespace

std::int64_t FatTreeShape::leaves() const {
  std::int64_t n = 1;
  for (unsigned d : down) n *= d;
  return n;
}

double FatTreeShape::upper_oversubscription() const {
  if (levels < 3) return 1.0;
  return static_cast<double>(down[1]) / static_cast<double>(up[2]);
}

int Topology::node_hops(std::int64_t a, std::int64_t b) const {
  assert(a != b && same_node(a, b));
  switch (node_topology) {
  case hardware::NodeTopology::mesh: return 1;
  case hardware::NodeTopology::ring: {
    const std::int64_t d = std::abs(a - b);
    return static_cast<int>(std::min(d, devices_per_node - d));
  }
  default: return 2;
  }
}

double FatTreeShape::oversubscription() const {
  if (levels < 2) return 1.0;
  return static_cast<double>(down[0]) / static_cast<double>(up[1]);
}

units::Seconds Topology::route_latency(std::int64_t a, std::int64_t b) const {
  assert(a != b && a >= 0 && b >= 0 && a < devices && b < devices);
  if (is_routed()) {
    units::Seconds sum;
    for (const Hop& hop : route(a, b)) sum += link_model(hop.link).latency;
    return sum;
  }
  if (same_node(a, b)) return device_link.latency * static_cast<double>(node_hops(a, b));
  return nic_link.latency * 2.0 + fabric_link.latency * fabric_hops(fabric, node_of(a), node_of(b));
}

units::ByteRate Topology::route_bandwidth(std::int64_t a, std::int64_t b) const {
  assert(a != b && a >= 0 && b >= 0 && a < devices && b < devices);
  if (is_routed()) {
    const auto hops = route(a, b);
    units::ByteRate narrowest = link_model(hops.front().link).bandwidth;
    for (const Hop& hop : hops) narrowest = units::min(narrowest, link_model(hop.link).bandwidth);
    return narrowest;
  }
  if (same_node(a, b)) return device_link.bandwidth;
  return units::min(nic_link.bandwidth, fabric_link.bandwidth);
}

Topology build_topology(const hardware::ClusterSpec& cluster, std::int64_t devices) {
  check_inputs(cluster, devices);
  Topology t;
  t.name = cluster.name;
  t.devices = devices;
  t.devices_per_node = cluster.node.devices;
  t.nodes = ceil_div(devices, cluster.node.devices);
  // A route crosses two links of its level (up from the sender, down to the receiver), so each
  // carries half the configured end-to-end latency (docs/platform-model.md).
  // Links carry the sustained share of their line rate (the platform's `efficiency`): NCCL moves
  // 128-byte payloads in packets with headers and flow control, ~20 of 25 GB/s per NVLink 3 lane
  // (NVIDIA/nccl-tests issue #149), ~80% of NVLink 4 (issue #212).
  const auto& nic = cluster.network.link;
  t.node_topology = cluster.node.topology;
  t.devices_per_nic = cluster.network.devices_per_nic;
  t.in_network_efficiency = cluster.node.in_network_efficiency;
  t.in_network_channels = cluster.node.in_network_channels;
  t.network_in_network_efficiency = cluster.network.in_network_efficiency;
  t.device_link = node_link_model(cluster.node);
  t.nic_link = {nic.bandwidth * nic.efficiency, nic.latency / 2.0};
  // By default fabric links carry no latency, so every inter-node route has exactly the configured
  // latency whatever its hop count: SimGrid CM02 weights bandwidth shares by route latency, and
  // unequal latencies would split a shared link unevenly. hop_latency adds a switch's latency per
  // link crossed (docs/network.md). A node's leaf link carries all its NICs.
  t.fabric_link = {cluster.network.link.bandwidth * static_cast<double>(t.nics_per_node()),
                   cluster.network.hop_latency};
  t.fabric = shape_for(cluster.network, t.nodes);
  route_flow_by_flow(cluster, t);
  t.interference = cluster.device.comm_interference;
  t.speed_variation = cluster.device.speed_variation;
  assert(t.fabric.leaves() >= t.nodes);
  return t;
}

} // namespace twocs::platform
