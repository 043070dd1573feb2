// DeepEP's dispatch and combine (deepseek-ai/DeepEP, normal kernels; DeepSeek-AI, "DeepSeek-V3
// Technical Report", 2024, section 3.2.2): a token goes once to every rank that holds one of its
// top-k experts, not once per expert. Across nodes it crosses the network once per destination
// node, to the rank with the same local index there, which forwards it over NVLink to the ranks
// of its node that need it. With n ranks in nodes of g, E experts spread evenly (E / n per rank)
// and T h bytes of tokens per rank (model::TokenRouting):
//   to each other node's same-index rank:   T h p_node,   p_node = routed_share(E, k, g E / n)
//   to each other rank of the node:     N T h p_rank,   p_rank = routed_share(E, k, E / n)
// the second being its own tokens for that rank and those that arrived for it from the other
// N - 1 = n / g - 1 nodes. DeepEP streams the forwarding through chunked buffers while tokens
// arrive, so both kinds of message start together. Combine sends the same bytes back.
#include "schedule_builder.hpp"

namespace twocs::lowering {

CollectiveSchedule forwarded_dispatch_schedule(const model::TokenRouting& routing, const ScheduleShape& shape) {
  CollectiveSchedule s;
  s.algorithm = Algorithm::direct;
  s.ranks = shape.ranks;
  const std::int32_t n = shape.ranks;
  if (n <= 1) return s;
  const std::int32_t g = shape.ranks_per_node > 0 && n % shape.ranks_per_node == 0 ? shape.ranks_per_node : n;
  const model::DispatchShares d = model::dispatch_shares(routing, n, g);
  const auto nodes = static_cast<std::int32_t>(d.nodes);
  for (std::int32_t node = 0; node < nodes; ++node)
    for (std::int32_t i = 0; i < g; ++i)
      for (std::int32_t j = 0; j < g; ++j)
        if (i != j) detail::add_message(s, node * g + i, node * g + j, d.to_each_rank, 0, {});
  for (std::int32_t a = 0; a < nodes; ++a)
    for (std::int32_t b = 0; b < nodes; ++b)
      if (a != b)
        for (std::int32_t i = 0; i < g; ++i) detail::add_message(s, a * g + i, b * g + i, d.to_each_node, 0, {});
  return s;
}

} // namespace twocs::lowering
