#include <twocs/lowering/collective_policy.hpp>

#include <algorithm>

#include <twocs/lowering/collective_protocol.hpp>

namespace twocs::lowering {
namespace {

std::int64_t node_of(const CollectiveNetwork& net, DeviceId d) {
  return d / std::max<std::int64_t>(1, net.devices_per_node);
}

} // namespace

std::int32_t ranks_per_node(const CollectiveNetwork& net, std::span<const DeviceId> devices) {
  if (devices.empty()) return 0;
  // Members of one node must be consecutive and every node must hold as many (NCCL's rings and
  // the hierarchical split assume it, ring.cpp and hierarchical.cpp).
  std::size_t run = 1;
  while (run < devices.size() && node_of(net, devices[run]) == node_of(net, devices[0])) ++run;
  if (run == devices.size()) return 0;
  if (devices.size() % run != 0) return 1;
  for (std::size_t i = 0; i < devices.size(); ++i)
    if (node_of(net, devices[i]) != node_of(net, devices[i / run * run])) return 1;
  return static_cast<std::int32_t>(run);
}

CollectiveContext group_context(const CollectiveNetwork& net, std::span<const DeviceId> devices) {
  CollectiveContext c;
  c.ranks = static_cast<std::int32_t>(devices.size());
  c.ranks_per_node = ranks_per_node(net, devices);
  c.intra_bandwidth = net.intra_bandwidth;
  c.intra_pair_bandwidth = net.intra_pair_bandwidth;
  c.intra_latency = net.intra_latency;
  c.inter_bandwidth = net.inter_bandwidth;
  c.inter_latency = c.ranks_per_node > 0 ? net.inter_latency : net.intra_latency;
  c.in_network_reduction = net.in_network_efficiency > 0;
  c.in_network_efficiency = c.in_network_reduction ? net.in_network_efficiency : 1.0;
  c.in_network_channels = net.in_network_channels;
  c.network_in_network_efficiency = net.network_in_network_efficiency;
  return c;
}

ScheduleShape group_shape(const CollectiveNetwork& net, std::span<const DeviceId> devices) {
  ScheduleShape s;
  s.ranks = static_cast<std::int32_t>(devices.size());
  const std::int32_t g = ranks_per_node(net, devices);
  s.ranks_per_node = g;
  // One ring per NIC of the node that the group's members use.
  s.channels =
      g > 0 ? static_cast<int>(std::max<std::int64_t>(1, g / std::max<std::int64_t>(1, net.devices_per_nic))) : 1;
  s.slice_bytes = net.slice_bytes;
  s.in_network_efficiency = net.in_network_efficiency > 0 ? net.in_network_efficiency : 1.0;
  s.node_in_network = net.in_network_efficiency > 0;
  s.network_in_network_efficiency = net.network_in_network_efficiency;
  return s;
}

CollectiveChoice choose_collective(const CollectivePolicy& policy, model::CommGroup group, CollectiveKind kind,
                                   units::Bytes size, std::span<const DeviceId> devices) {
  CollectiveChoice choice;
  if (policy.network && kind != CollectiveKind::send_recv && devices.size() > 1) {
    choice.shape = group_shape(*policy.network, devices);
    const CollectiveContext context = group_context(*policy.network, devices);
    const Algorithm asked = policy.for_group(group);
    choice.algorithm = asked == Algorithm::automatic
                           ? choose_algorithm(kind, size, context, policy.automatic_tree, policy.protocols)
                           : asked;
    // NCCL's protocol for the algorithm that runs (make_schedule falls back to the ring where the
    // asked one does not apply), as collbench does, within a node and across nodes alike.
    if (policy.protocols) {
      const Algorithm runs = scheduled_algorithm(choice.algorithm, kind, choice.shape);
      apply_protocol(choice.shape, runs, kind, context, choose_protocol(runs, kind, size, context));
    }
  }
  // A fallback ring (the asked algorithm does not apply to the group) is lowered as the ring is.
  choice.shape.ranks = static_cast<std::int32_t>(devices.size());
  choice.shape.coarse = lowers_coarse(policy.lowering, kind, scheduled_algorithm(choice.algorithm, kind, choice.shape),
                                      static_cast<std::int32_t>(devices.size()));
  return choice;
}

} // namespace twocs::lowering
