#include <twocs/platform/collective_context.hpp>

#include <algorithm>
#include <cassert>

namespace twocs::platform {
namespace {

/// A device's node links all together: a mesh has devices - 1, a ring two, a switch one.
double links_per_device(const Topology& t) {
  switch (t.node_topology) {
  case hardware::NodeTopology::mesh: return static_cast<double>(std::max<std::int64_t>(1, t.devices_per_node - 1));
  case hardware::NodeTopology::ring: return t.devices_per_node > 2 ? 2.0 : 1.0;
  default: return 1.0;
  }
}

} // namespace

lowering::CollectiveContext collective_context(const Topology& t, std::int32_t ranks) {
  assert(ranks >= 1 && ranks <= t.devices);
  lowering::CollectiveContext c;
  c.ranks = ranks;
  c.ranks_per_node = ranks > t.devices_per_node ? static_cast<std::int32_t>(t.devices_per_node) : 0;
  c.intra_pair_bandwidth = t.device_link.bandwidth;
  c.intra_bandwidth = t.device_link.bandwidth * links_per_device(t);
  c.intra_latency = t.devices_per_node > 1 ? t.route_latency(0, 1) : units::Seconds(0);
  // Devices sharing a NIC share its bandwidth.
  c.inter_bandwidth =
      units::min(t.nic_link.bandwidth, t.fabric_link.bandwidth) / static_cast<double>(t.devices_per_nic);
  c.inter_latency = ranks > t.devices_per_node ? t.route_latency(0, t.devices_per_node) : c.intra_latency;
  c.in_network_reduction = t.in_network_efficiency > 0;
  c.in_network_efficiency = c.in_network_reduction ? t.in_network_efficiency : 1.0;
  return c;
}

lowering::ScheduleShape schedule_shape(const Topology& t, std::int32_t ranks) {
  lowering::ScheduleShape s;
  s.ranks = ranks;
  const bool multi = ranks > t.devices_per_node && ranks % t.devices_per_node == 0;
  s.ranks_per_node = multi ? static_cast<std::int32_t>(t.devices_per_node) : 0;
  s.channels = multi ? static_cast<int>(t.nics_per_node()) : 1;
  s.slice_bytes = 512.0 * 1024; // NCCL's Simple step buffer: NCCL_BUFFSIZE 4 MiB / NCCL_STEPS 8
  s.in_network_efficiency = t.in_network_efficiency > 0 ? t.in_network_efficiency : 1.0;
  return s;
}

} // namespace twocs::platform
