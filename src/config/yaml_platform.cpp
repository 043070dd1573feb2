#include "yaml_platform.hpp"

#include <array>
#include <cstdint>
#include <map>

#include <fmt/format.h>

#include "yaml_operator_model.hpp"
#include "yaml_quantity.hpp"
#include "yaml_reader.hpp"
#include "yaml_suggest.hpp"

namespace twocs::config::detail {
namespace {

using hardware::ClusterSpec;

constexpr std::array<std::string_view, 4> platform_keys = {"name", "device", "node", "cluster"};
constexpr std::array<std::string_view, 5> device_keys = {"name", "peak_flops", "memory", "memory_bandwidth",
                                                         "operator_model"};
constexpr std::array<std::string_view, 2> node_keys = {"devices", "interconnect"};
constexpr std::array<std::string_view, 4> interconnect_keys = {"topology", "bandwidth", "latency", "efficiency"};
constexpr std::array<std::string_view, 2> cluster_keys = {"nodes", "network"};
constexpr std::array<std::string_view, 6> network_keys = {"topology",         "bandwidth",        "latency",
                                                          "oversubscription", "nodes_per_switch", "efficiency"};

constexpr std::array<std::string_view, 4> dtype_names = {"bf16", "fp16", "fp32", "fp8"};
constexpr std::array dtype_values = {model::Dtype::bf16, model::Dtype::fp16, model::Dtype::fp32, model::Dtype::fp8};
constexpr std::array<std::string_view, 1> node_topology_names = {"switch"};
constexpr std::array node_topology_values = {hardware::NodeTopology::switch_};
constexpr std::array<std::string_view, 2> network_topology_names = {"fat-tree", "switch"};
constexpr std::array network_topology_values = {hardware::NetworkTopology::fat_tree,
                                                hardware::NetworkTopology::switch_};

/// Counts far beyond any machine (the largest clusters hold ~10^5 devices, a node 4-72), so
/// that nodes x devices and every product of them stays inside 64-bit integers.
constexpr std::int64_t max_devices_per_node = 1 << 16;
constexpr std::int64_t max_nodes = 1 << 24;

std::int64_t read_count_up_to(const Field& f, std::int64_t limit) {
  const std::int64_t count = read_count(f);
  if (count > limit)
    fail_at(f.where(), f.path, fmt::format("{} = {} is beyond what twocs models (at most {})", f.path, count, limit),
            "check the value: it is larger than any machine built");
  return count;
}

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
  return node;
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
  return network;
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
  cluster.network = read_network(c.required("network", "{topology: fat-tree, bandwidth: 25GB/s, latency: 5us}"));
  return cluster;
}

} // namespace twocs::config::detail
