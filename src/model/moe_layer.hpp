// Private: the FFN of a layer, dense (Megatron-LM column- and row-parallel MLP) or a mixture of
// experts (Megatron-Core MoE: router, token permutation, grouped expert GEMMs, shared experts).
#pragma once

#include <twocs/model/layer_ops.hpp>

namespace twocs::model::detail {

void add_dense_ffn_forward(StepSequence& steps, const LayerShape& shape, Pass pass);
void add_dense_ffn_backward(StepSequence& steps, const LayerShape& shape);
/// The dense FFN's halves: [sequence-parallel all-gather,] fc1 and the activation, then fc2
/// [and its reduce-scatter or all-reduce]; backward, fc2's gradients, then the activation's and
/// fc1's (what Megatron-Core's shared-expert overlap runs under the dispatch and the combine).
void add_dense_ffn_fc1_forward(StepSequence& steps, const LayerShape& shape, Pass pass);
void add_dense_ffn_fc2_forward(StepSequence& steps, const LayerShape& shape, Pass pass);
void add_dense_ffn_fc2_backward(StepSequence& steps, const LayerShape& shape);
void add_dense_ffn_fc1_backward(StepSequence& steps, const LayerShape& shape);

void add_moe_forward(StepSequence& steps, const LayerShape& shape, Pass pass);
void add_moe_backward(StepSequence& steps, const LayerShape& shape);
/// The experts' activation between the grouped fc1 and fc2, with the weighting by the routing
/// probabilities (what Megatron-Core's `moe_act` recomputation re-runs: moe/experts.py, the
/// activation checkpoint of TEGroupedMLP around bias_act_func).
void add_moe_activation_forward(StepSequence& steps, const LayerShape& shape, Pass pass);
/// The shared experts' MLP, every token once (none without shared experts).
void add_shared_experts_forward(StepSequence& steps, const LayerShape& shape, Pass pass);

/// Tokens routed to one expert per micro-batch on the busiest expert-parallel rank:
/// tokens x top_k / experts (the mean), times load_imbalance when ep > 1, capped by the
/// capacity factor (Fedus et al. 2022, Eq. 3: capacity = tokens x top_k / experts x factor).
[[nodiscard]] double busiest_expert_tokens(const LayerShape& shape);
/// Tokens of this rank that enter the MoE layer: b s / t (Megatron-Core requires sequence
/// parallelism with tensor parallelism for MoE, and experts are not tensor-split).
[[nodiscard]] std::int64_t moe_tokens(const LayerShape& shape);

} // namespace twocs::model::detail
