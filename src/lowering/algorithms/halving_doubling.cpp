// Recursive halving and doubling (Rabenseifner, "Optimization of collective reduction
// operations", ICCS 2004; Thakur, Rabenseifner & Gropp, IJHPCA 2005): reduce-scatter by
// halving (step t exchanges S / 2^(t+1) with the rank 2^(L-1-t) away), all-gather by doubling
// (step t exchanges 2^t S / n with the rank 2^t away), L = log2 n. All-reduce is both:
// 2 L latencies and 2 (n - 1) / n S bytes per rank. Power-of-two groups only.
#include <cassert>

#include "schedule_builder.hpp"

namespace twocs::lowering::detail {
namespace {

struct Exchange {
  std::int32_t distance;
  units::Bytes bytes;
};

std::vector<Exchange> exchanges(CollectiveKind kind, units::Bytes size, std::int32_t n) {
  int levels = 0;
  while ((1 << levels) < n) ++levels;
  std::vector<Exchange> out;
  if (kind == CollectiveKind::all_reduce || kind == CollectiveKind::reduce_scatter)
    for (int t = 0; t < levels; ++t) out.push_back({n >> (t + 1), size / static_cast<double>(2 << t)});
  if (kind == CollectiveKind::all_reduce || kind == CollectiveKind::all_gather)
    for (int t = 0; t < levels; ++t) out.push_back({1 << t, size * static_cast<double>(1 << t) / n});
  return out;
}

} // namespace

CollectiveSchedule halving_doubling_schedule(CollectiveKind kind, units::Bytes size, const ScheduleShape& shape) {
  const std::int32_t n = shape.ranks;
  assert(is_power_of_two(n));
  CollectiveSchedule s;
  s.algorithm = Algorithm::halving_doubling;
  s.ranks = n;
  const auto steps = exchanges(kind, size, n);
  for (std::size_t t = 0; t < steps.size(); ++t)
    for (std::int32_t i = 0; i < n; ++i) {
      MessageIds after;
      if (t > 0) {
        const auto prev = static_cast<std::uint32_t>((t - 1) * static_cast<std::size_t>(n));
        after.push_back(prev + static_cast<std::uint32_t>(i));                         // its own last send
        after.push_back(prev + static_cast<std::uint32_t>(i ^ steps[t - 1].distance)); // what it received
      }
      add_message(s, i, i ^ steps[t].distance, steps[t].bytes, static_cast<std::int32_t>(t), std::move(after));
    }
  return s;
}

} // namespace twocs::lowering::detail
