#include <twocs/platform/collective_context.hpp>

#include <algorithm>
#include <cassert>
#include <numeric>
#include <vector>

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

std::vector<lowering::DeviceId> first_devices(std::int32_t ranks) {
  std::vector<lowering::DeviceId> devices(static_cast<std::size_t>(ranks));
  std::iota(devices.begin(), devices.end(), 0);
  return devices;
}

} // namespace

lowering::CollectiveNetwork collective_network(const Topology& t) {
  lowering::CollectiveNetwork n;
  n.devices_per_node = t.devices_per_node;
  n.devices_per_nic = t.devices_per_nic;
  n.intra_pair_bandwidth = t.device_link.bandwidth;
  n.intra_bandwidth = t.device_link.bandwidth * links_per_device(t);
  n.intra_latency = t.devices > 1 && t.devices_per_node > 1 ? t.route_latency(0, 1) : units::Seconds(0);
  // Devices sharing a NIC share its bandwidth.
  n.inter_bandwidth =
      units::min(t.nic_link.bandwidth, t.fabric_link.bandwidth) / static_cast<double>(t.devices_per_nic);
  n.inter_latency = t.devices > t.devices_per_node ? t.route_latency(0, t.devices_per_node) : n.intra_latency;
  n.in_network_efficiency = t.in_network_efficiency;
  n.in_network_channels = t.in_network_channels;
  n.network_in_network_efficiency = t.network_in_network_efficiency;
  return n;
}

lowering::CollectivePolicy collective_policy(const hardware::ClusterSpec& cluster, std::int64_t devices) {
  lowering::CollectivePolicy policy;
  for (model::CommGroup g : model::all_comm_groups)
    policy.algorithms[static_cast<std::size_t>(g)] = lowering::configured_algorithm(cluster.network.collectives, g);
  policy.network = collective_network(build_topology(cluster, devices));
  return policy;
}

lowering::CollectiveContext collective_context(const Topology& t, std::int32_t ranks) {
  assert(ranks >= 1 && ranks <= t.devices);
  return lowering::group_context(collective_network(t), first_devices(ranks));
}

lowering::ScheduleShape schedule_shape(const Topology& t, std::int32_t ranks) {
  return lowering::group_shape(collective_network(t), first_devices(ranks));
}

} // namespace twocs::platform
