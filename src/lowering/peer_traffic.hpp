// Private: the traffic of a folded run's mirrored peers (CollectivePolicy::folded_peer_traffic,
// `--fold shared`). A folded run simulates one device per pipeline stage and lets it stand for
// the tensor-, context- and data-parallel peers of its stage. Their collectives and messages
// that leave the node would be missing from the links they share with the simulated ones (an
// oversubscribed uplink, a NIC several devices share), so they are lowered as traffic without
// compute: each mirror group runs the collective whole, entered when the simulated member enters
// its own and waited for before the member leaves it (docs/simulation.md, "Folding identical
// replicas").
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include <twocs/lowering/rank_layout.hpp>
#include <twocs/lowering/task_sink.hpp>

namespace twocs::lowering::detail {

class PeerTraffic {
public:
  /// `simulated[d]`: whether device d runs a program (the folded run's devices).
  PeerTraffic(const RankLayout& layout, std::int64_t devices_per_node, std::vector<bool> simulated);

  /// Whether the group has members on more than one node.
  [[nodiscard]] bool leaves_node(std::span<const DeviceId> devices) const;

  /// The groups that the folded peers of `devices`' simulated members run the same collective
  /// over, member i of each standing where member i of `devices` stands; none of them is
  /// `devices`, and none repeats. For a folded group (one simulated member) the groups of its kind
  /// among its stage's ranks; for a group of simulated members (a message between stages, the
  /// embedding pair) the same group of every other tensor, context and data coordinate.
  [[nodiscard]] const std::vector<std::vector<DeviceId>>& mirrors(model::CommGroup kind,
                                                                  const std::vector<DeviceId>& devices);

private:
  [[nodiscard]] bool simulated(DeviceId d) const { return simulated_[static_cast<std::size_t>(d)]; }
  [[nodiscard]] std::vector<std::vector<DeviceId>>
  stage_groups(model::CommGroup kind, const std::vector<DeviceId>& devices, DeviceId member) const;
  [[nodiscard]] std::vector<std::vector<DeviceId>> shifted_groups(const std::vector<DeviceId>& devices) const;

  RankLayout layout_;
  std::int64_t devices_per_node_;
  std::vector<bool> simulated_;
  std::map<std::pair<int, std::vector<DeviceId>>, std::vector<std::vector<DeviceId>>> cache_;
};

} // namespace twocs::lowering::detail
