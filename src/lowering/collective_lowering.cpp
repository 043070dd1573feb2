#include <twocs/lowering/collective_lowering.hpp>

#include <array>

namespace twocs::lowering {
namespace {

constexpr std::array<std::string_view, 3> names = {"step", "coarse", "auto"};

/// Ring steps of a reduction or gather (collective.hpp, ring_plan).
std::int64_t ring_steps(CollectiveKind kind, std::int64_t ranks) {
  return kind == CollectiveKind::all_reduce ? 2 * (ranks - 1) : ranks - 1;
}

} // namespace

std::string_view to_string(CollectiveLowering l) { return names[static_cast<std::size_t>(l)]; }

std::optional<CollectiveLowering> collective_lowering_from_string(std::string_view name) {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<CollectiveLowering>(i);
  return std::nullopt;
}

bool coarse_possible(CollectiveKind kind, Algorithm algorithm, std::int32_t ranks) {
  const bool reduction_or_gather = kind == CollectiveKind::all_reduce || kind == CollectiveKind::reduce_scatter ||
                                   kind == CollectiveKind::all_gather;
  // The engine carries a coarse transfer's step count in 16 bits (lowering::Transfer::latency_steps).
  return reduction_or_gather && algorithm == Algorithm::ring && ranks > 2 && ring_steps(kind, ranks) <= 0xFFFF;
}

bool lowers_coarse(CollectiveLowering mode, CollectiveKind kind, Algorithm algorithm, std::int32_t ranks) {
  if (!coarse_possible(kind, algorithm, ranks)) return false;
  switch (mode) {
  case CollectiveLowering::step: return false;
  case CollectiveLowering::coarse: return true;
  case CollectiveLowering::automatic: return ranks >= coarse_from_ranks;
  }
  return false;
}

} // namespace twocs::lowering
