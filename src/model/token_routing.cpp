// How many ranks and nodes a token's top-k experts reach (DeepEP's deduplicated dispatch).
#include <algorithm>

#include <twocs/model/operator.hpp>

namespace twocs::model {

double routed_share(std::int64_t experts, std::int64_t top_k, std::int64_t held) {
  // C(E - m, k) / C(E, k) = prod over i < k of (E - m - i) / (E - i).
  double missed = 1.0;
  for (std::int64_t i = 0; i < top_k; ++i) {
    if (experts - held - i <= 0) return 1.0;
    missed *= static_cast<double>(experts - held - i) / static_cast<double>(experts - i);
  }
  return 1.0 - missed;
}

DispatchShares dispatch_shares(const TokenRouting& routing, std::int64_t ranks, std::int64_t ranks_per_node) {
  DispatchShares d;
  d.nodes = ranks / ranks_per_node;
  const std::int64_t per_rank = routing.experts / ranks; // experts spread evenly over the group
  // Skew raises the busiest rank's (and its node's) share, to at most every token.
  const auto skewed = [&](double share) { return std::min(1.0, share * routing.load_imbalance); };
  d.to_each_rank =
      routing.tokens * (skewed(routed_share(routing.experts, routing.top_k, per_rank)) * static_cast<double>(d.nodes));
  d.to_each_node = routing.tokens * skewed(routed_share(routing.experts, routing.top_k, per_rank * ranks_per_node));
  return d;
}

} // namespace twocs::model
