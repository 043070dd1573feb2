#include "yaml_platform.hpp"

#include <array>
#include <cstdint>
#include <map>

#include <fmt/format.h>

#include "yaml_operator_model.hpp"
#include "yaml_provenance.hpp"
#include "yaml_quantity.hpp"
#include "yaml_reader.hpp"
#include "yaml_suggest.hpp"
#include "yaml_whatif.hpp"

namespace twocs::config::detail {
namespace {

using hardware::ClusterSpec;

constexpr std::array<std::string_view, 6> platform_keys = {"name", "device", "node", "cluster", "whatif", "provenance"};
constexpr std::array<std::string_view, 7> device_keys = {
    "name", "peak_flops", "memory", "memory_bandwidth", "operator_model", "comm_interference", "speed_variation"};
constexpr std::array<std::string_view, 1> interference_keys = {"compute_slowdown"};
constexpr std::array<std::string_view, 2> speed_variation_keys = {"spread", "seed"};
constexpr std::array<std::string_view, 3> node_keys = {"devices", "interconnect", "host_launch_time"};
constexpr std::array<std::string_view, 6> interconnect_keys = {
    "topology", "bandwidth", "latency", "efficiency", "in_network_efficiency", "in_network_channels"};
constexpr std::array<std::string_view, 2> cluster_keys = {"nodes", "network"};
constexpr std::array<std::string_view, 18> network_keys = {"topology",
                                                           "bandwidth",
                                                           "latency",
                                                           "oversubscription",
                                                           "nodes_per_switch",
                                                           "efficiency",
                                                           "switches_per_pod",
                                                           "devices_per_nic",
                                                           "hop_latency",
                                                           "upper_oversubscription",
                                                           "collectives",
                                                           "routing",
                                                           "ecmp_seed",
                                                           "cross_rail",
                                                           "fabric_bandwidth",
                                                           "torus_dimensions",
                                                           "switches_per_group",
                                                           "in_network_efficiency"};

constexpr std::array<std::string_view, 4> dtype_names = {"bf16", "fp16", "fp32", "fp8"};
constexpr std::array dtype_values = {model::Dtype::bf16, model::Dtype::fp16, model::Dtype::fp32, model::Dtype::fp8};
constexpr std::array<std::string_view, 4> node_topology_names = {"switch", "mesh", "ring", "pcie"};
constexpr std::array node_topology_values = {hardware::NodeTopology::switch_, hardware::NodeTopology::mesh,
                                             hardware::NodeTopology::ring, hardware::NodeTopology::pcie};
constexpr std::array<std::string_view, 5> network_topology_names = {"fat-tree", "switch", "rail-fat-tree", "torus",
                                                                    "dragonfly"};
constexpr std::array network_topology_values = {hardware::NetworkTopology::fat_tree, hardware::NetworkTopology::switch_,
                                                hardware::NetworkTopology::rail_fat_tree,
                                                hardware::NetworkTopology::torus, hardware::NetworkTopology::dragonfly};
constexpr std::array<std::string_view, 2> routing_names = {"ideal", "ecmp"};
constexpr std::array routing_values = {hardware::Routing::ideal, hardware::Routing::ecmp};
constexpr std::array<std::string_view, 2> cross_rail_names = {"pxn", "spine"};
constexpr std::array cross_rail_values = {hardware::CrossRail::pxn, hardware::CrossRail::spine};

/// Counts far beyond any machine (the largest clusters hold ~10^5 devices, a node 4-72), so
/// that nodes x devices and every product of them stays inside 64-bit integers.
constexpr std::int64_t max_devices_per_node = 1 << 16;
constexpr std::int64_t max_nodes = 1 << 24;

std::map<model::Dtype, units::FlopRate> read_peak_flops(const Field& field) {
  std::map<model::Dtype, units::FlopRate> peaks;
  for (const auto& [key, value] : read_entries(field)) {
    std::size_t index = dtype_names.size();
    for (std::size_t i = 0; i < dtype_names.size(); ++i)
      if (dtype_names[i] == key) index = i;
    if (index == dtype_names.size())
      fail_at(value.key_where, field.path,
              fmt::format("unknown dtype '{}' in {}; allowed: {}", key, field.path, join_names(dtype_names)),
              suggest(key, dtype_names));
    peaks[dtype_values[index]] = read_flop_rate(value, "312TFLOP/s");
  }
  return peaks;
}

hardware::CommInterference read_interference(const Field& field) {
  const MappingReader m(field, interference_keys);
  hardware::CommInterference interference;
  interference.compute_slowdown =
      read_real_between(m.required("compute_slowdown", "0.19"), 0, 10,
                        "give the fraction a kernel slows by while its device communicates, e.g. 0.19; 0 turns it off");
  return interference;
}

hardware::SpeedVariation read_speed_variation(const Field& field) {
  const MappingReader m(field, speed_variation_keys);
  hardware::SpeedVariation variation;
  variation.spread =
      read_real_between(m.required("spread", "0.03"), 0, 1,
                        "give the sigma of the log of the per-device slowdown, e.g. 0.03; 0 turns it off");
  if (const auto f = m.optional("seed")) variation.seed = static_cast<std::uint64_t>(read_count(*f));
  return variation;
}

hardware::DeviceSpec read_device(const Field& field) {
  const MappingReader d(field, device_keys);
  hardware::DeviceSpec device;
  const auto name = d.optional("name");
  device.name = name ? read_text(*name) : std::string("device");
  device.peak_flops = read_peak_flops(d.required("peak_flops", "{bf16: 312TFLOP/s, fp32: 19.5TFLOP/s}"));
  device.memory = read_bytes(d.required("memory", "80GiB"), "80GiB");
  device.memory_bandwidth = read_byte_rate(d.required("memory_bandwidth", "2039GB/s"), "2039GB/s");
  if (const auto f = d.optional("operator_model")) {
    auto params = read_operator_model(*f);
    device.roofline = params.roofline;
    device.kernels = std::move(params.kernels);
  }
  if (const auto f = d.optional("comm_interference")) device.comm_interference = read_interference(*f);
  if (const auto f = d.optional("speed_variation")) device.speed_variation = read_speed_variation(*f);
  return device;
}

hardware::NodeSpec read_node(const Field& field) {
  const MappingReader n(field, node_keys);
  hardware::NodeSpec node;
  node.devices = read_count_up_to(n.required("devices", "8"), max_devices_per_node);
  const MappingReader link(n.required("interconnect", "{topology: switch, bandwidth: 300GB/s, latency: 2us}"),
                           interconnect_keys);
  if (const auto f = link.optional("topology"))
    node.topology = read_enum(*f, node_topology_names, node_topology_values);
  node.interconnect.bandwidth = read_byte_rate(link.required("bandwidth", "300GB/s"), "300GB/s");
  node.interconnect.latency = read_duration(link.required("latency", "2us"), "2us");
  if (const auto f = link.optional("efficiency")) node.interconnect.efficiency = read_real(*f);
  if (const auto f = link.optional("in_network_efficiency")) node.in_network_efficiency = read_real(*f);
  if (const auto f = link.optional("in_network_channels"))
    node.in_network_channels = static_cast<std::int32_t>(read_count_up_to(*f, hardware::max_in_network_channels));
  if (const auto f = n.optional("host_launch_time")) node.host_launch_time = read_duration(*f, "13.5us");
  return node;
}

/// The keys of the routed networks (docs/network.md, section 2): routing, rails, tori, dragonflies.
void read_routed_network(const MappingReader& n, hardware::NetworkSpec& network) {
  if (const auto f = n.optional("routing")) network.routing = read_enum(*f, routing_names, routing_values);
  if (const auto f = n.optional("ecmp_seed")) network.ecmp_seed = static_cast<std::uint64_t>(read_count_or_zero(*f));
  if (const auto f = n.optional("cross_rail")) network.cross_rail = read_enum(*f, cross_rail_names, cross_rail_values);
  if (const auto f = n.optional("fabric_bandwidth")) network.fabric_bandwidth = read_byte_rate(*f, "50GB/s");
  if (const auto f = n.optional("switches_per_group")) network.switches_per_group = read_count_up_to(*f, max_nodes);
  if (const auto f = n.optional("torus_dimensions")) {
    std::int64_t product = 1;
    for (const Field& d : read_list(*f)) {
      network.torus_dimensions.push_back(read_count_up_to(d, max_nodes));
      product *= network.torus_dimensions.back();
      if (product > max_nodes)
        fail_at(f->where(), f->path, "cluster.network.torus_dimensions multiply to more nodes than twocs models",
                "give the torus of the cluster's nodes, e.g. [16, 16, 16]");
    }
    if (network.torus_dimensions.empty() || network.torus_dimensions.size() > 3)
      fail_at(f->where(), f->path, "cluster.network.torus_dimensions needs 1 to 3 dimensions",
              "give the nodes along each dimension, e.g. [16, 16] or [8, 8, 8]");
  }
}

hardware::NetworkSpec read_network(const Field& field) {
  const MappingReader n(field, network_keys);
  hardware::NetworkSpec network;
  if (const auto f = n.optional("topology"))
    network.topology = read_enum(*f, network_topology_names, network_topology_values);
  network.link.bandwidth = read_byte_rate(n.required("bandwidth", "25GB/s"), "25GB/s");
  network.link.latency = read_duration(n.required("latency", "5us"), "5us");
  if (const auto f = n.optional("oversubscription")) network.oversubscription = read_real(*f);
  if (const auto f = n.optional("nodes_per_switch")) network.nodes_per_switch = read_count_up_to(*f, max_nodes);
  if (const auto f = n.optional("efficiency")) network.link.efficiency = read_real(*f);
  if (const auto f = n.optional("switches_per_pod")) network.switches_per_pod = read_count_up_to(*f, max_nodes, 0);
  if (const auto f = n.optional("upper_oversubscription")) network.upper_oversubscription = read_real(*f);
  if (const auto f = n.optional("devices_per_nic"))
    network.devices_per_nic = read_count_up_to(*f, max_devices_per_node);
  if (const auto f = n.optional("hop_latency")) network.hop_latency = read_duration(*f, "300ns");
  if (const auto f = n.optional("collectives")) network.collectives = read_collectives(*f);
  if (const auto f = n.optional("in_network_efficiency")) network.in_network_efficiency = read_real(*f);
  read_routed_network(n, network);
  return network;
}

/// What the routed networks need of the rest of the file, with the key to fix.
void check_routed_network(const Field& field, const ClusterSpec& cluster) {
  const auto& net = cluster.network;
  using hardware::NetworkTopology;
  if (net.topology == NetworkTopology::torus) {
    std::int64_t product = 1;
    for (const std::int64_t d : net.torus_dimensions) product *= d;
    if (net.torus_dimensions.empty() || product != cluster.nodes)
      fail_at(field.where(), field.path,
              fmt::format("a torus of cluster.network.torus_dimensions must hold the cluster's {} nodes (got {})",
                          cluster.nodes, net.torus_dimensions.empty() ? 0 : product),
              "set torus_dimensions so that their product is cluster.nodes, e.g. [16, 16] for 256 nodes");
  }
  if (net.topology == NetworkTopology::dragonfly && net.switches_per_group < 1)
    fail_at(field.where(), field.path, "a dragonfly needs cluster.network.switches_per_group (routers per group)",
            "add switches_per_group: 8 (and nodes_per_switch: nodes per router)");
  if (net.routing == hardware::Routing::ecmp && net.topology != NetworkTopology::fat_tree &&
      net.topology != NetworkTopology::rail_fat_tree)
    fail_at(field.where(), field.path,
            fmt::format("routing: ecmp needs a fat tree; a {} has one minimal path", hardware::to_string(net.topology)),
            "remove routing, or use topology: fat-tree or rail-fat-tree");
}

} // namespace

ClusterSpec read_platform(const YamlNode& root, std::string_view default_name) {
  const MappingReader top(root, platform_keys, "the platform");
  ClusterSpec cluster;
  const auto name = top.optional("name");
  cluster.name = name ? read_text(*name) : std::string(default_name);
  cluster.device = read_device(top.required("device", "{name: A100, peak_flops: {bf16: 312TFLOP/s}, ...}"));
  cluster.node = read_node(top.required("node", "{devices: 8, interconnect: {...}}"));
  const MappingReader c(top.required("cluster", "{nodes: 16, network: {...}}"), cluster_keys);
  cluster.nodes = read_count_up_to(c.required("nodes", "16"), max_nodes);
  const Field network_field = c.required("network", "{topology: fat-tree, bandwidth: 25GB/s, latency: 5us}");
  cluster.network = read_network(network_field);
  check_routed_network(network_field, cluster);
  if (const auto f = top.optional("whatif")) apply_whatif(*f, cluster);
  check_provenance(root); // metadata only (twocs show platform), checked as strictly
  return cluster;
}

/// `collectives: {tensor: ring, data: auto}`: the algorithm per communication kind.
std::map<std::string, std::string> read_collectives(const Field& field) {
  static constexpr std::array<std::string_view, 4> kinds = {"tensor", "pipeline", "data", "expert"};
  static constexpr std::array<std::string_view, 8> algorithms = {
      "auto", "ring", "tree", "halving-doubling", "hierarchical", "in-network", "direct", "nvls-tree"};
  const MappingReader m(field, kinds);
  std::map<std::string, std::string> out;
  for (std::string_view kind : kinds)
    if (const auto f = m.optional(kind)) {
      const std::string name = read_text(*f);
      bool known = false;
      for (std::string_view a : algorithms) known = known || a == name;
      if (!known)
        fail_at(f->where(), f->path, fmt::format("unknown algorithm '{}'; allowed: {}", name, join_names(algorithms)),
                suggest(name, algorithms));
      out[std::string(kind)] = name;
    }
  return out;
}

} // namespace twocs::config::detail
