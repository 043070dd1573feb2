// Direct algorithms: every pair of ranks at once, so a rank uses all of its links together (a
// mesh such as AMD Infinity Fabric gives each pair its own link; RCCL spreads its channels over
// all of them, ROCm blogs "MI300X RCCL xGMI"). All-to-all: every rank sends S / n to every
// other rank; pairwise runs n - 1 rounds instead, in round t rank i sends to i + t and receives
// from i - t (MPI's pairwise exchange, Thakur et al. 2005). Reduce-scatter: every rank sends
// each other rank that rank's S / n; all-gather: every rank sends its S / n to every other;
// all-reduce: both, a rank's gather messages waiting for every scatter message into it.
// Each rank sends (n - 1) / n S per phase over its n - 1 links at once.
#include <cassert>

#include "schedule_builder.hpp"

namespace twocs::lowering::detail {
namespace {

/// One phase of n (n - 1) messages of `piece`; a rank's messages wait for `gate` of the rank.
MessageIds add_exchange(CollectiveSchedule& s, units::Bytes piece, const std::vector<MessageIds>& gate, bool pairwise,
                        std::int32_t step0) {
  const std::int32_t n = s.ranks;
  const auto base = static_cast<std::uint32_t>(s.messages.size());
  MessageIds ids;
  for (std::int32_t t = 1; t < n; ++t)
    for (std::int32_t i = 0; i < n; ++i) {
      MessageIds after = gate[static_cast<std::size_t>(i)];
      if (pairwise && t > 1) {
        const auto prev = base + static_cast<std::uint32_t>((t - 2) * n);
        after.push_back(prev + static_cast<std::uint32_t>(i));                     // its previous send
        after.push_back(prev + static_cast<std::uint32_t>((i - (t - 1) + n) % n)); // its previous receive
      }
      ids.push_back(add_message(s, i, (i + t) % n, piece, step0 + (pairwise ? t - 1 : 0), std::move(after)));
    }
  return ids;
}

} // namespace

CollectiveSchedule direct_schedule(Algorithm algorithm, CollectiveKind kind, units::Bytes size,
                                   const ScheduleShape& shape) {
  const std::int32_t n = shape.ranks;
  CollectiveSchedule s;
  s.algorithm =
      algorithm == Algorithm::pairwise && kind == CollectiveKind::all_to_all ? Algorithm::pairwise : Algorithm::direct;
  s.ranks = n;
  if (n <= 1) return s;
  const bool pairwise = s.algorithm == Algorithm::pairwise;
  const units::Bytes piece = size / static_cast<double>(n);
  std::vector<MessageIds> gate(static_cast<std::size_t>(n));
  const MessageIds first = add_exchange(s, piece, gate, pairwise, 0);
  if (kind != CollectiveKind::all_reduce) return s;
  for (std::uint32_t id : first) gate[static_cast<std::size_t>(s.messages[id].dst)].push_back(id);
  add_exchange(s, piece, gate, false, 1);
  return s;
}

} // namespace twocs::lowering::detail
