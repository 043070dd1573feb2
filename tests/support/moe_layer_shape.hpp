// The layer shape the MoE tests build: a model's mixture-of-experts layer on one rank of an
// expert-parallel group, FlashAttention, no tensor parallelism.
#pragma once

#include <cstdint>

#include <twocs/model/layer_ops.hpp>

namespace twocs::testing {

/// `m`'s MoE layer with `expert` expert-parallel ranks (experts / expert on each).
inline model::LayerShape moe_layer_shape(const model::TransformerConfig& m, std::int64_t expert = 1) {
  model::LayerShape shape;
  shape.model = m;
  shape.moe_ffn = true;
  shape.expert = expert;
  shape.attention = model::AttentionKernel::fused;
  return shape;
}

} // namespace twocs::testing
