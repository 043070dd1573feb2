// Private: what a Megatron-Core MoE layer's token dispatcher exchanges and waits for before its
// dispatch (docs/simulation.md, "Mixture of experts"): the all-to-all dispatcher's token counts,
// HybridEP's routing map and plan, and the host's wait for the counts. Each adds nothing without
// expert parallelism.
#pragma once

#include <cstdint>

#include <twocs/model/layer_ops.hpp>

namespace twocs::model::detail {

/// The all-to-all dispatcher's per-expert token counts, all-gathered over the expert group.
void add_count_exchange(StepSequence& steps, const LayerShape& shape, Pass pass);
/// HybridEP's routing map all-gathered over the expert group and scanned into its plan, forward
/// only; `tokens` are the rank's routed tokens.
void add_hybridep_preprocess(StepSequence& steps, const LayerShape& shape, std::int64_t tokens, Pass pass);
/// The host's wait for the token counts before the dispatch; none when the dispatch is sync-free.
void add_dispatch_host_sync(StepSequence& steps, const LayerShape& shape, Pass pass);

} // namespace twocs::model::detail
