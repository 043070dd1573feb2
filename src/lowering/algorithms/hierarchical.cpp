// Hierarchical collectives (NCCL's intra-node/inter-node split; Jia et al., "Highly scalable
// deep learning training system with mixed-precision", 2018, 2D all-reduce): all-reduce is an
// intra-node reduce-scatter of S, an inter-node all-reduce of S / g among the ranks with the same
// local index (g rings at once, one per NIC), and an intra-node all-gather of S. Reduce-scatter
// and all-gather use the first two and last two phases. Each phase is a ring (ring.cpp).
#include <cassert>

#include "schedule_builder.hpp"

namespace twocs::lowering::detail {
namespace {

struct Phase {
  CollectiveKind kind;
  bool intra; // within each node, or across nodes among equal local indices
};

std::vector<Phase> phases(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::all_reduce:
    return {{CollectiveKind::reduce_scatter, true},
            {CollectiveKind::all_reduce, false},
            {CollectiveKind::all_gather, true}};
  case CollectiveKind::reduce_scatter:
    return {{CollectiveKind::reduce_scatter, true}, {CollectiveKind::reduce_scatter, false}};
  case CollectiveKind::all_gather: return {{CollectiveKind::all_gather, false}, {CollectiveKind::all_gather, true}};
  default: return {};
  }
}

} // namespace

CollectiveSchedule hierarchical_schedule(CollectiveKind kind, units::Bytes size, const ScheduleShape& shape) {
  const std::int32_t n = shape.ranks;
  const std::int32_t g = shape.ranks_per_node;
  assert(g > 1 && g < n && n % g == 0);
  const std::int32_t m = n / g;
  CollectiveSchedule s;
  s.algorithm = Algorithm::hierarchical;
  s.ranks = n;
  std::vector<MessageIds> gate(static_cast<std::size_t>(n));
  std::int32_t step = 0;
  for (const Phase& phase : phases(kind)) {
    ScheduleShape sub = shape;
    sub.ranks = phase.intra ? g : m;
    sub.ranks_per_node = 0;
    const units::Bytes sub_size = phase.intra ? size : size / static_cast<double>(g);
    const CollectiveSchedule ring = ring_schedule(phase.kind, sub_size, sub);
    const std::size_t first = s.messages.size();
    for (std::int32_t group = 0; group < (phase.intra ? m : g); ++group) {
      std::vector<std::int32_t> ranks(static_cast<std::size_t>(sub.ranks));
      for (std::int32_t j = 0; j < sub.ranks; ++j)
        ranks[static_cast<std::size_t>(j)] = phase.intra ? group * g + j : j * g + group;
      append_phase(s, ring, ranks, gate, step);
    }
    step += phase.kind == CollectiveKind::all_reduce ? 2 * (sub.ranks - 1) : sub.ranks - 1;
    gate = rank_exits(s, first);
  }
  return s;
}

} // namespace twocs::lowering::detail
