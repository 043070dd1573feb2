#include "peer_traffic.hpp"

#include <algorithm>
#include <cassert>
#include <set>

namespace twocs::lowering::detail {
namespace {

/// The devices of a group as a set, to tell groups apart whatever their order.
std::vector<DeviceId> sorted(std::vector<DeviceId> devices) {
  std::sort(devices.begin(), devices.end());
  return devices;
}

} // namespace

PeerTraffic::PeerTraffic(const RankLayout& layout, std::int64_t devices_per_node, std::vector<bool> simulated)
    : layout_(layout), devices_per_node_(std::max<std::int64_t>(devices_per_node, 1)),
      simulated_(std::move(simulated)) {
  assert(static_cast<std::int64_t>(simulated_.size()) == layout_.world_size());
}

bool PeerTraffic::leaves_node(std::span<const DeviceId> devices) const {
  return std::any_of(devices.begin(), devices.end(),
                     [&](DeviceId d) { return d / devices_per_node_ != devices.front() / devices_per_node_; });
}

const std::vector<std::vector<DeviceId>>& PeerTraffic::mirrors(model::CommGroup kind,
                                                               const std::vector<DeviceId>& devices) {
  auto key = std::make_pair(static_cast<int>(kind), devices);
  if (const auto it = cache_.find(key); it != cache_.end()) return it->second;
  const auto only = std::count_if(devices.begin(), devices.end(), [&](DeviceId d) { return simulated(d); });
  assert((only == 1 || only == static_cast<std::ptrdiff_t>(devices.size())) && "a group is folded or simulated");
  const auto member = *std::find_if(devices.begin(), devices.end(), [&](DeviceId d) { return simulated(d); });
  // A folded group that is its kind's group of its member: the stage's other groups of that kind
  // (expert groups are blocks of adjacent ranks, which no shift of coordinates gives).
  const bool kind_group = only == 1 && layout_.group(member, kind) == devices;
  return cache_.emplace(std::move(key), kind_group ? stage_groups(kind, devices, member) : shifted_groups(devices))
      .first->second;
}

std::vector<std::vector<DeviceId>>
PeerTraffic::stage_groups(model::CommGroup kind, const std::vector<DeviceId>& devices, DeviceId member) const {
  const auto first = layout_.rank({0, 0, layout_.coordinates(member).pipeline, 0});
  std::set<std::vector<DeviceId>> seen{sorted(devices)};
  std::vector<std::vector<DeviceId>> groups;
  for (DeviceId p = first; p < first + static_cast<DeviceId>(layout_.ranks_per_stage()); ++p) {
    auto group = layout_.group(p, kind);
    if (seen.insert(sorted(group)).second) groups.push_back(std::move(group));
  }
  return groups;
}

std::vector<std::vector<DeviceId>> PeerTraffic::shifted_groups(const std::vector<DeviceId>& devices) const {
  // Every member moved by the same tensor, context and data offset (modulo each degree): what the
  // peer at that offset of each member runs.
  const RankCoordinates sizes = layout_.coordinates(static_cast<DeviceId>(layout_.ranks_per_stage() - 1));
  const std::int64_t t = sizes.tensor + 1, c = sizes.context + 1, d = sizes.data + 1;
  std::set<std::vector<DeviceId>> seen{sorted(devices)};
  std::vector<std::vector<DeviceId>> groups;
  for (std::int64_t dp = 0; dp < d; ++dp)
    for (std::int64_t cp = 0; cp < c; ++cp)
      for (std::int64_t tp = 0; tp < t; ++tp) {
        std::vector<DeviceId> group;
        group.reserve(devices.size());
        for (DeviceId x : devices) {
          RankCoordinates at = layout_.coordinates(x);
          at.tensor = (at.tensor + tp) % t;
          at.context = (at.context + cp) % c;
          at.data = (at.data + dp) % d;
          group.push_back(layout_.rank(at));
        }
        if (seen.insert(sorted(group)).second) groups.push_back(std::move(group));
      }
  return groups;
}

} // namespace twocs::lowering::detail
