#include <twocs/model/parameters.hpp>

#include <algorithm>

#include <twocs/model/layer_ops.hpp>

#include "layer_dims.hpp"
#include "mla_attention.hpp"
#include "op_builders.hpp"

namespace twocs::model {

ParameterCounts count_parameters(const TransformerConfig& model, std::int64_t tensor, std::int64_t expert) {
  LayerShape shape;
  shape.model = model;
  shape.tensor = tensor;
  const auto d = detail::dims_of(shape);
  const std::int64_t h = model.hidden;
  ParameterCounts counts;
  // Column-parallel weights and biases are split; row-parallel biases and norms are replicated.
  const std::int64_t norm = detail::norm_parameters(model);
  counts.per_layer = (h * d.qkv_local + d.qkv_local) + (d.attention_local * h + h) +
                     (h * d.ffn_in_local + d.ffn_in_local) + (d.ffn_out_local * h + h) + 2 * norm;
  // MLA: its down and up projections and latent norms instead of the fused QKV (mla_attention.hpp).
  if (model.mla) counts.per_layer += detail::mla_projection_parameters(model, tensor) - (h * d.qkv_local + d.qkv_local);
  // Replicated: two norms, the attention output's and fc2's biases, MLA's down projections and
  // latent norms (mla_attention.hpp).
  counts.replicated_per_layer = 2 * norm + 2 * h + (model.mla ? detail::mla_replicated_parameters(model) : 0);
  // Sandwich norms: two more norms, replicated.
  if (model.post_norms) {
    counts.per_layer += 2 * norm;
    counts.replicated_per_layer += 2 * norm;
  }
  // QK-norm: one head_dim scale for the queries and one for the keys, replicated.
  if (model.qk_norm) {
    counts.per_layer += 2 * model.head_dim();
    counts.replicated_per_layer += 2 * model.head_dim();
  }
  counts.dense_per_layer = counts.per_layer;
  counts.replicated_dense_per_layer = counts.replicated_per_layer;
  if (model.moe) {
    // A MoE layer: router (replicated), the rank's experts whole (not tensor-split), and the
    // shared experts as a tensor-parallel MLP (Megatron-Core, expert-tensor-parallel size 1).
    const auto& moe = *model.moe;
    const std::int64_t fe = moe.expert_ffn_hidden;
    const std::int64_t fc1 = model.ffn_kind == FfnKind::swiglu ? 2 * fe : fe;
    const std::int64_t shared_f = moe.shared_experts * fe;
    const std::int64_t shared_fc1 = model.ffn_kind == FfnKind::swiglu ? 2 * shared_f : shared_f;
    const std::int64_t dense_mlp = (h * d.ffn_in_local + d.ffn_in_local) + (d.ffn_out_local * h + h);
    const std::int64_t shared =
        shared_f > 0 ? (h * shared_fc1 / tensor + shared_fc1 / tensor) + (shared_f / tensor * h + h) : 0;
    counts.expert_per_layer = moe.experts / expert * (h * fc1 + fe * h);
    counts.per_layer = counts.per_layer - dense_mlp + h * moe.experts + shared + counts.expert_per_layer;
    // The router (TopKRouter marks its weight sequence_parallel) in place of fc2's bias, which
    // only a shared expert keeps.
    counts.replicated_per_layer += h * moe.experts - (shared_f > 0 ? 0 : h);
    counts.dense_layers = std::min(moe.dense_layers, model.layers);
  }
  counts.embedding = local_vocab(model.vocab, tensor) * h;
  if (model.position == PositionKind::learned) counts.embedding += model.seq_len * h;
  counts.output = model.tied_embeddings ? 0 : local_vocab(model.vocab, tensor) * h;
  counts.final_norm = norm;
  // Megatron-Core MultiTokenPredictionLayer: enorm, hnorm, final_layernorm and eh_proj, a
  // column-parallel 2h -> h linear without bias.
  counts.mtp_block_replicated = 3 * norm;
  counts.mtp_block = counts.mtp_block_replicated + 2 * h * (h / tensor);
  return counts;
}

} // namespace twocs::model
