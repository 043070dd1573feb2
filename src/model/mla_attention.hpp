// Private: the projections of multi-head latent attention (DeepSeek-V2/V3) per tensor-parallel
// rank, as Megatron-Core's MLASelfAttention runs them (megatron/core/transformer/
// multi_latent_attention.py): the down projections h -> q_lora_rank and h -> kv_lora_rank + rope
// are duplicated on every rank (TELinear parallel_mode "duplicated", on the rank's s / t tokens
// under sequence parallelism), their RMSNorms run there, the latents are all-gathered over the
// sequence, and the up projections are column-parallel over the heads. The attention core and
// the row-parallel output projection are the layer's usual ones, with qk and v head dims.
#pragma once

#include <cstdint>

#include <twocs/model/layer_ops.hpp>

#include "layer_dims.hpp"

namespace twocs::model::detail {

/// Query/key/value projections, latent norms and RoPE, forward (replaces the fused QKV).
void add_mla_projections_forward(StepSequence& steps, const LayerShape& shape, const LayerDims& d, Pass pass);
/// Of those, the up projections from the gathered latents and RoPE: what Megatron-Core's
/// `mla_up_proj` recomputation re-runs (multi_latent_attention.py, qkv_up_proj_and_rope_apply).
void add_mla_up_projections_forward(StepSequence& steps, const LayerShape& shape, const LayerDims& d, Pass pass);
/// Their backward, in execution order (RoPE, up projections, norms, down projections).
void add_mla_projections_backward(StepSequence& steps, const LayerShape& shape, const LayerDims& d);
/// Parameters of those projections and norms on one rank of `tensor` (no biases, as DeepSeek-V3).
[[nodiscard]] std::int64_t mla_projection_parameters(const TransformerConfig& m, std::int64_t tensor);
/// Of those, the ones every tensor-parallel rank holds whole: the down projections and the
/// latent norms (Megatron-Core MLASelfAttention: linear_q_down_proj and linear_kv_down_proj are
/// duplicated, not split).
[[nodiscard]] std::int64_t mla_replicated_parameters(const TransformerConfig& m);

} // namespace twocs::model::detail
