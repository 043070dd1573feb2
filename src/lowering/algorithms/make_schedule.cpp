#include <algorithm>
#include <array>
#include <cassert>

#include <twocs/lowering/collective_algorithm.hpp>

#include "schedule_builder.hpp"

namespace twocs::lowering {
namespace {

constexpr std::array<std::string_view, 6> kind_names = {"all-reduce", "reduce-scatter", "all-gather",
                                                        "all-to-all", "broadcast",      "send-recv"};
constexpr std::array<std::string_view, 9> algorithm_names = {
    "auto", "ring", "tree", "halving-doubling", "hierarchical", "in-network", "direct", "pairwise", "nvls-tree"};

bool hierarchical_applies(const ScheduleShape& s) {
  return s.ranks_per_node > 1 && s.ranks_per_node < s.ranks && s.ranks % s.ranks_per_node == 0;
}

bool spans_nodes(const ScheduleShape& s) { return s.ranks_per_node > 0 && s.ranks_per_node < s.ranks; }

/// NVLS inside a node needs the node's switch to reduce; across nodes the network's switches
/// must (SHARP), and the node's too where a node holds several ranks (in_network.cpp).
bool in_network_applies(const ScheduleShape& s) {
  if (!spans_nodes(s)) return s.node_in_network;
  return s.network_in_network_efficiency > 0 && (s.ranks_per_node == 1 || s.node_in_network);
}

} // namespace

std::string_view to_string(CollectiveKind k) { return kind_names[static_cast<std::size_t>(k)]; }
std::string_view to_string(Algorithm a) { return algorithm_names[static_cast<std::size_t>(a)]; }

std::optional<Algorithm> algorithm_from_string(std::string_view name) {
  for (std::size_t i = 0; i < algorithm_names.size(); ++i)
    if (algorithm_names[i] == name) return static_cast<Algorithm>(i);
  if (name == "nvls" || name == "sharp") return Algorithm::in_network;
  return std::nullopt;
}

std::optional<CollectiveKind> collective_kind_from_string(std::string_view name) {
  for (std::size_t i = 0; i < kind_names.size(); ++i)
    if (kind_names[i] == name) return static_cast<CollectiveKind>(i);
  return std::nullopt;
}

CollectiveKind kind_of(model::Collective c) {
  switch (c) {
  case model::Collective::all_reduce: return CollectiveKind::all_reduce;
  case model::Collective::reduce_scatter: return CollectiveKind::reduce_scatter;
  case model::Collective::all_gather: return CollectiveKind::all_gather;
  case model::Collective::send_recv: return CollectiveKind::send_recv;
  case model::Collective::all_to_all: return CollectiveKind::all_to_all;
  case model::Collective::ring_exchange: return CollectiveKind::send_recv; // one send per member
  }
  return CollectiveKind::all_reduce;
}

Algorithm configured_algorithm(const std::map<std::string, std::string>& collectives, model::CommGroup group) {
  const auto it = collectives.find(std::string(model::to_string(group)));
  if (it == collectives.end()) return Algorithm::automatic;
  return algorithm_from_string(it->second).value_or(Algorithm::automatic);
}

Algorithm scheduled_algorithm(Algorithm algorithm, CollectiveKind kind, const ScheduleShape& shape) {
  if (kind == CollectiveKind::all_to_all) return algorithm == Algorithm::pairwise ? algorithm : Algorithm::direct;
  if (shape.ranks > 1) {
    const bool reduction_or_gather = kind == CollectiveKind::all_reduce || kind == CollectiveKind::reduce_scatter ||
                                     kind == CollectiveKind::all_gather;
    const bool all_reduce = kind == CollectiveKind::all_reduce;
    if ((algorithm == Algorithm::tree && all_reduce) ||
        (algorithm == Algorithm::halving_doubling && reduction_or_gather && detail::is_power_of_two(shape.ranks)) ||
        (algorithm == Algorithm::hierarchical && reduction_or_gather && hierarchical_applies(shape)) ||
        (algorithm == Algorithm::in_network && all_reduce && in_network_applies(shape)) ||
        (algorithm == Algorithm::in_network_tree && all_reduce && hierarchical_applies(shape) &&
         shape.node_in_network) ||
        (algorithm == Algorithm::direct && reduction_or_gather))
      return algorithm;
  }
  return Algorithm::ring;
}

namespace {

CollectiveSchedule build_schedule(Algorithm algorithm, CollectiveKind kind, units::Bytes size,
                                  const ScheduleShape& shape) {
  using namespace detail;
  if (kind == CollectiveKind::all_to_all) return direct_schedule(algorithm, kind, size, shape);
  switch (scheduled_algorithm(algorithm, kind, shape)) {
  case Algorithm::tree: return tree_schedule(size, shape);
  case Algorithm::halving_doubling: return halving_doubling_schedule(kind, size, shape);
  case Algorithm::hierarchical: return hierarchical_schedule(kind, size, shape);
  case Algorithm::in_network: return in_network_schedule(size, shape);
  case Algorithm::in_network_tree: return in_network_tree_schedule(size, shape);
  case Algorithm::direct: return direct_schedule(algorithm, kind, size, shape);
  default: return ring_schedule(kind, size, shape);
  }
}

} // namespace

CollectiveSchedule make_schedule(Algorithm algorithm, CollectiveKind kind, units::Bytes size,
                                 const ScheduleShape& shape) {
  assert(shape.ranks >= 1 && shape.channels >= 1 && shape.chunks >= 1);
  assert(shape.protocol_bandwidth_fraction > 0 && shape.protocol_bandwidth_fraction <= 1);
  CollectiveSchedule s = build_schedule(algorithm, kind, size, shape);
  // The protocol's costs (collective_protocol.hpp): wire bytes, and its latency before the start.
  for (ScheduledMessage& m : s.messages) {
    m.bytes = m.bytes / shape.protocol_bandwidth_fraction;
    if (m.after.empty()) m.latency_steps = std::min(m.latency_steps + shape.protocol_latency_steps, 0xFFFF);
  }
  return s;
}

units::Bytes bytes_each_rank_sends(CollectiveKind kind, Algorithm algorithm, units::Bytes size, std::int32_t ranks) {
  if (ranks <= 1) return units::Bytes(0);
  const double n = ranks;
  if ((algorithm == Algorithm::in_network || algorithm == Algorithm::in_network_tree) &&
      kind == CollectiveKind::all_reduce)
    return size;
  switch (kind) {
  case CollectiveKind::all_reduce: return size * (2.0 * (n - 1) / n);
  case CollectiveKind::reduce_scatter:
  case CollectiveKind::all_gather:
  case CollectiveKind::all_to_all: return size * ((n - 1) / n);
  case CollectiveKind::broadcast:
  case CollectiveKind::send_recv: return size;
  }
  return size;
}

} // namespace twocs::lowering
