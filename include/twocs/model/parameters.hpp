// Parameter counts of a GPT model, whole and per tensor-parallel rank.
#pragma once

#include <cstdint>

#include <twocs/model/transformer.hpp>

namespace twocs::model {

struct ParameterCounts {
  std::int64_t per_layer = 0; // one transformer layer on one tensor-parallel rank
  /// Of per_layer, the routed experts' weights (E / ep whole experts): Megatron-Core reduces
  /// their gradients and shards their optimizer state over the expert-data-parallel group.
  std::int64_t expert_per_layer = 0;
  std::int64_t embedding = 0;  // word-embedding slice (shared with the output layer) + position embedding
  std::int64_t final_norm = 0; // the last LayerNorm, replicated
  std::int64_t output = 0;     // an untied output layer's slice (0 when tied to the word embedding)

  /// The whole model on one rank if it held every layer (t ranks together hold the model).
  [[nodiscard]] std::int64_t total(std::int64_t layers) const {
    return layers * per_layer + embedding + final_norm + output;
  }
};

/// Per rank of a `tensor`-way tensor-parallel group. With tensor = 1 this is the model:
/// 12 h^2 + 13 h per GPT layer with f = 4h (Narayanan et al. SC'21, section 5.1), V h word and
/// s h position embedding parameters.
/// With model.moe, per_layer is a MoE layer holding experts / `expert` whole experts.
[[nodiscard]] ParameterCounts count_parameters(const TransformerConfig& model, std::int64_t tensor,
                                               std::int64_t expert = 1);

} // namespace twocs::model
