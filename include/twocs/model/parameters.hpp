// Parameter counts of a GPT model, whole and per tensor-parallel rank.
#pragma once

#include <algorithm>
#include <cstdint>

#include <twocs/model/transformer.hpp>

namespace twocs::model {

struct ParameterCounts {
  std::int64_t per_layer = 0; // one transformer layer on one tensor-parallel rank (a MoE layer with model.moe)
  /// One dense-FFN layer (= per_layer without model.moe); the first `dense_layers` layers are such.
  std::int64_t dense_per_layer = 0;
  std::int64_t dense_layers = 0; // model.moe.dense_layers (DeepSeek-V3: 3); 0 without model.moe
  /// Of per_layer, the routed experts' weights (E / ep whole experts): Megatron-Core reduces
  /// their gradients and shards their optimizer state over the expert-data-parallel group.
  std::int64_t expert_per_layer = 0;
  /// Of per_layer and dense_per_layer, the weights every tensor-parallel rank holds whole: the
  /// norms, the row-parallel biases, a MoE layer's router, MLA's down projections and latent
  /// norms. Under sequence parallelism each rank's gradient of them covers its s / t tokens, so
  /// Megatron-LM all-reduces them over the tensor group after backward (finalize_model_grads,
  /// _allreduce_layernorm_grads: every parameter marked sequence_parallel).
  std::int64_t replicated_per_layer = 0;
  std::int64_t replicated_dense_per_layer = 0;
  std::int64_t embedding = 0;  // word-embedding slice (shared with the output layer) + position embedding
  std::int64_t final_norm = 0; // the last LayerNorm, replicated
  std::int64_t output = 0;     // an untied output layer's slice (0 when tied to the word embedding)
  /// One multi-token-prediction depth's weights besides its transformer layer: the embedding's
  /// and the hidden states' norms, the final norm (replicated) and eh_proj's 2h x h / t slice.
  std::int64_t mtp_block = 0;
  std::int64_t mtp_block_replicated = 0; // of mtp_block, the three norms

  /// Layers first .. first + count - 1 (0-based over the model), dense and MoE ones each counted.
  [[nodiscard]] std::int64_t layer_range(std::int64_t first, std::int64_t count) const {
    const std::int64_t dense = std::clamp<std::int64_t>(dense_layers - first, 0, count);
    return dense * dense_per_layer + (count - dense) * per_layer;
  }
  /// Of layer_range, the weights replicated over the tensor group.
  [[nodiscard]] std::int64_t replicated_range(std::int64_t first, std::int64_t count) const {
    const std::int64_t dense = std::clamp<std::int64_t>(dense_layers - first, 0, count);
    return dense * replicated_dense_per_layer + (count - dense) * replicated_per_layer;
  }
  /// Of layer_range, the weights each tensor-parallel rank holds a slice of (the linear layers'
  /// and the routed experts'): those FP8 training multiplies in FP8 (Transformer Engine's Linear,
  /// LayerNormLinear and GroupedLinear). The replicated ones stay 16-bit.
  [[nodiscard]] std::int64_t linear_range(std::int64_t first, std::int64_t count) const {
    return layer_range(first, count) - replicated_range(first, count);
  }
  /// Of layer_range, the routed experts' weights (dense layers have none).
  [[nodiscard]] std::int64_t expert_range(std::int64_t first, std::int64_t count) const {
    return (count - std::clamp<std::int64_t>(dense_layers - first, 0, count)) * expert_per_layer;
  }
  /// `depths` multi-token-prediction depths from model layer `first` (the model's layer count):
  /// their transformer layers and blocks. Not part of total(): DeepSeek-V3's 671B main-model
  /// parameters leave out its 14B MTP module (deepseek-ai/DeepSeek-V3 README, "685B").
  [[nodiscard]] std::int64_t mtp_range(std::int64_t first, std::int64_t depths) const {
    return layer_range(first, depths) + depths * mtp_block;
  }
  /// Of mtp_range, the weights replicated over the tensor group.
  [[nodiscard]] std::int64_t mtp_replicated_range(std::int64_t first, std::int64_t depths) const {
    return replicated_range(first, depths) + depths * mtp_block_replicated;
  }
  /// The whole model on one rank if it held every layer (t ranks together hold the model).
  [[nodiscard]] std::int64_t total(std::int64_t layers) const {
    return layer_range(0, layers) + embedding + final_norm + output;
  }
};

/// Per rank of a `tensor`-way tensor-parallel group. With tensor = 1 this is the model:
/// 12 h^2 + 13 h per GPT layer with f = 4h (Narayanan et al. SC'21, section 5.1), V h word and
/// s h position embedding parameters.
/// With model.moe, per_layer is a MoE layer holding experts / `expert` whole experts and
/// dense_per_layer a layer of the first moe.dense_layers, whose FFN is dense (ffn_hidden wide).
[[nodiscard]] ParameterCounts count_parameters(const TransformerConfig& model, std::int64_t tensor,
                                               std::int64_t expert = 1);

} // namespace twocs::model
