#include <twocs/hardware/validate.hpp>

#include <algorithm>

#include <fmt/format.h>

#include <twocs/error.hpp>
#include <twocs/hardware/attention_kernel.hpp>

namespace twocs::hardware {
namespace {

template <class Q> void require_positive(Q value, const char* key, const char* example) {
  if (!(value.value() > 0))
    throw InputError(fmt::format("{} must be positive", key), key,
                     fmt::format("give a positive value such as {}", example));
}

void require_non_negative(units::Seconds value, const char* key) {
  if (value.value() < 0) throw InputError(fmt::format("{} must not be negative", key), key, "use 0us or more");
}

/// The keys of issue 9's networks: pods, upper oversubscription, shared NICs, hop latency,
/// in-network reduction.
void validate_network_extras(const ClusterSpec& cluster) {
  const NetworkSpec& w = cluster.network;
  if (w.switches_per_pod < 0)
    throw InputError("cluster.network.switches_per_pod must not be negative", "cluster.network.switches_per_pod",
                     "give the leaf switches under one aggregation layer, e.g. 16, or 0 for two levels");
  if (!(w.upper_oversubscription >= 1))
    throw InputError("cluster.network.upper_oversubscription must be at least 1",
                     "cluster.network.upper_oversubscription", "use 1 for a non-blocking upper tier, 2 for 2:1, ...");
  if (w.devices_per_nic < 1 || cluster.node.devices % w.devices_per_nic != 0)
    throw InputError("cluster.network.devices_per_nic must divide node.devices", "cluster.network.devices_per_nic",
                     "e.g. 1 (a NIC per device) or 2 (two devices share a NIC)");
  require_non_negative(w.hop_latency, "cluster.network.hop_latency");
  if (!(cluster.node.in_network_efficiency >= 0 && cluster.node.in_network_efficiency <= 1))
    throw InputError("node.interconnect.in_network_efficiency must lie in [0, 1]",
                     "node.interconnect.in_network_efficiency",
                     "0 (no in-network reduction) or e.g. 0.85 (NVLS on H100)");
  if (!(w.in_network_efficiency >= 0 && w.in_network_efficiency <= 1))
    throw InputError("cluster.network.in_network_efficiency must lie in [0, 1]",
                     "cluster.network.in_network_efficiency",
                     "0 (no in-network reduction in the network) or e.g. 0.85 (SHARP, NCCL's CollNet on Hopper)");
  if (cluster.node.in_network_channels < 1 || cluster.node.in_network_channels > max_in_network_channels)
    throw InputError("node.interconnect.in_network_channels must lie in [1, 64]",
                     "node.interconnect.in_network_channels", "e.g. 16 (NCCL's NVLS channels on Hopper)");
}

} // namespace

void validate_collectives(const ClusterSpec& cluster, const std::map<std::string, std::string>& collectives,
                          std::string_view key_prefix) {
  const bool node_reduces = cluster.node.in_network_efficiency > 0;
  const bool network_reduces = cluster.network.in_network_efficiency > 0;
  for (const auto& [kind, algorithm] : collectives) {
    const std::string key = fmt::format("{}.{}", key_prefix, kind);
    const bool in_network = algorithm == "in-network" || algorithm == "nvls" || algorithm == "sharp";
    if (in_network && !node_reduces && !network_reduces)
      throw InputError(fmt::format("{}: {} needs a switch that reduces, and no switch of this platform does "
                                   "(node.interconnect.in_network_efficiency and "
                                   "cluster.network.in_network_efficiency are 0)",
                                   key, algorithm),
                       key,
                       "use auto or ring, or give the platform in-network reduction (e.g. "
                       "node.interconnect.in_network_efficiency: 0.85 for NVLS on H100)");
    if (algorithm == "nvls-tree" && !node_reduces)
      throw InputError(fmt::format("{}: nvls-tree needs NVLS inside the node, and this platform's node switch does "
                                   "not reduce (node.interconnect.in_network_efficiency is 0)",
                                   key),
                       key, "use auto, ring or tree, or set node.interconnect.in_network_efficiency (0.85 on H100)");
  }
}

void validate(const ClusterSpec& cluster) {
  validate_collectives(cluster, cluster.network.collectives, "cluster.network.collectives");
  const DeviceSpec& d = cluster.device;
  // The platform's measured attention implementations: its default names one, or there is one.
  (void)chosen_attention_kernel(d, {});
  if (d.peak_flops.empty())
    throw InputError("device.peak_flops lists no dtype", "device.peak_flops", "add e.g. {bf16: 312TFLOP/s}");
  for (const auto& [dtype, rate] : d.peak_flops) require_positive(rate, "device.peak_flops", "312TFLOP/s");
  require_positive(d.memory, "device.memory", "80GiB");
  require_positive(d.memory_bandwidth, "device.memory_bandwidth", "2039GB/s");
  const auto efficiency_ok = [](double e) { return e > 0 && e <= 1; };
  if (!efficiency_ok(d.roofline.gemm_efficiency))
    throw InputError("device.operator_model.gemm_efficiency must lie in (0, 1]",
                     "device.operator_model.gemm_efficiency", "give a fraction of peak such as 0.8");
  if (d.roofline.fp8_gemm_efficiency && !efficiency_ok(*d.roofline.fp8_gemm_efficiency))
    throw InputError("device.operator_model.fp8_gemm_efficiency must lie in (0, 1]",
                     "device.operator_model.fp8_gemm_efficiency", "give a fraction of the FP8 peak such as 0.75");
  if (!efficiency_ok(d.roofline.memory_efficiency))
    throw InputError("device.operator_model.memory_efficiency must lie in (0, 1]",
                     "device.operator_model.memory_efficiency", "give a fraction of peak bandwidth such as 0.8");
  require_non_negative(d.roofline.kernel_overhead, "device.operator_model.kernel_overhead");
  for (const auto& m : d.kernels.measured)
    if (!d.peak(m.dtype))
      throw InputError(
          fmt::format("device.operator_model.measured has a {} kernel but device.peak_flops lists no {}",
                      model::to_string(m.dtype), model::to_string(m.dtype)),
          "device.operator_model.measured",
          fmt::format("add {}: <rate> to device.peak_flops, or remove those rows", model::to_string(m.dtype)));
  if (!efficiency_ok(cluster.node.interconnect.efficiency))
    throw InputError("node.interconnect.efficiency must lie in (0, 1]", "node.interconnect.efficiency",
                     "give the fraction of the line rate collectives sustain, e.g. 0.77");
  if (!efficiency_ok(cluster.network.link.efficiency))
    throw InputError("cluster.network.efficiency must lie in (0, 1]", "cluster.network.efficiency",
                     "give the fraction of the line rate collectives sustain, e.g. 0.9");
  if (cluster.node.devices < 1)
    throw InputError("node.devices must be at least 1", "node.devices", "give the devices per node, e.g. 8");
  require_positive(cluster.node.interconnect.bandwidth, "node.interconnect.bandwidth", "300GB/s");
  require_non_negative(cluster.node.interconnect.latency, "node.interconnect.latency");
  if (cluster.nodes < 1)
    throw InputError("cluster.nodes must be at least 1", "cluster.nodes", "give a node count, e.g. 16");
  require_positive(cluster.network.link.bandwidth, "cluster.network.bandwidth", "25GB/s");
  require_non_negative(cluster.network.link.latency, "cluster.network.latency");
  if (!(cluster.network.oversubscription >= 1))
    throw InputError("cluster.network.oversubscription must be at least 1 (1 = non-blocking)",
                     "cluster.network.oversubscription", "use 1 for a non-blocking fat tree, 2 for 2:1, ...");
  if (cluster.network.nodes_per_switch < 1)
    throw InputError("cluster.network.nodes_per_switch must be at least 1", "cluster.network.nodes_per_switch",
                     "give the nodes under one leaf switch, e.g. 32");
  validate_network_extras(cluster);
}

void validate_fit(const ClusterSpec& cluster, const model::TrainingPlan& plan) {
  const auto world = plan.world_size();
  if (world > cluster.device_count())
    throw InputError(fmt::format("the plan needs {} devices ({}) but the cluster has {} ({} nodes x {} devices)", world,
                                 model::describe_degrees(plan.parallelism), cluster.device_count(), cluster.nodes,
                                 cluster.node.devices),
                     "training.parallelism",
                     fmt::format("lower a parallel degree or add nodes, e.g. --set cluster.nodes={}",
                                 (world + cluster.node.devices - 1) / cluster.node.devices));
  if (!cluster.device.peak(plan.dtype))
    throw InputError(
        fmt::format("device {} lists no peak for training.dtype {}", cluster.device.name, model::to_string(plan.dtype)),
        "training.dtype",
        fmt::format("add {}: <rate> to device.peak_flops or train in a dtype it lists", model::to_string(plan.dtype)));
  const model::TpSmMargin& margin = plan.overlap.tp_comm_sm_margin;
  const std::int64_t withheld = std::max(margin.proj_fprop, margin.fc2_fprop);
  if (withheld > 0 && withheld >= cluster.device.kernels.compute_units)
    throw InputError(fmt::format("training.overlap.tp_comm_sm_margin withholds {} SMs, and device {} has {}", withheld,
                                 cluster.device.name, cluster.device.kernels.compute_units),
                     "training.overlap.tp_comm_sm_margin",
                     cluster.device.kernels.compute_units > 0
                         ? "withhold fewer SMs than the device has"
                         : "give the device's SM count, device.operator_model.compute_units, or remove the margin");
}

} // namespace twocs::hardware
