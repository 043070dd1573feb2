// Private: the attention core of a context-parallel layer (training.parallelism.context > 1),
// in place of the single FlashAttention kernel of fused_attention.hpp.
#pragma once

#include <twocs/model/layer_ops.hpp>

#include "layer_dims.hpp"

namespace twocs::model::detail {

/// Bytes of one rank's K and V for its s / cp tokens: b (s / cp) (kv heads / t) x 2 d_head
/// elements (MLA: nope + rope + v per head).
[[nodiscard]] units::Bytes context_kv_block(const LayerShape& shape);

/// Forward (or, under selective recomputation, recompute) of the attention core over the cp group.
void add_context_attention_forward(StepSequence& steps, const LayerShape& shape, const LayerDims& d, Pass pass);
/// Its backward.
void add_context_attention_backward(StepSequence& steps, const LayerShape& shape, const LayerDims& d);

} // namespace twocs::model::detail
