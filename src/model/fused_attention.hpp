// Private: the attention core as one fused FlashAttention kernel (training.attention: fused),
// in place of the scores GEMM, softmax, dropout and context GEMM and their backward.
#pragma once

#include <twocs/model/layer_ops.hpp>

#include "layer_dims.hpp"

namespace twocs::model::detail {

/// The fused forward kernel `attn.flash` (pass `pass`: forward, or recompute under selective
/// recomputation).
void add_fused_attention_forward(StepSequence& steps, const LayerShape& shape, const LayerDims& d, Pass pass);
/// The fused backward: `attn.flash.bwd.recompute` (the scores Q.K^T recomputed, pass recompute)
/// and `attn.flash.bwd` (the four gradient GEMMs).
void add_fused_attention_backward(StepSequence& steps, const LayerShape& shape, const LayerDims& d);

} // namespace twocs::model::detail
