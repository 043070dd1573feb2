// Private: the attention core as one fused FlashAttention kernel (training.attention: fused),
// in place of the scores GEMM, softmax, dropout and context GEMM and their backward.
#pragma once

#include <twocs/model/layer_ops.hpp>

#include "layer_dims.hpp"

#include <string>

namespace twocs::model::detail {

/// The whole sequence on one rank: s queries against s keys.
[[nodiscard]] AttentionShape flash_geometry(const LayerShape& shape, const LayerDims& d);
/// One forward kernel over `a` (Q, K, V read once, O and the fp32 row statistics written).
[[nodiscard]] ComputeOp flash_forward(std::string name, const LayerShape& shape, const AttentionShape& a, Pass pass);
/// The backward kernels over `a`: `name`.recompute (Q.K^T again, pass recompute) and `name`.
void add_flash_backward(StepSequence& steps, const std::string& name, const LayerShape& shape, const AttentionShape& a);

/// The fused forward kernel `attn.flash` (pass `pass`: forward, or recompute under selective
/// recomputation).
void add_fused_attention_forward(StepSequence& steps, const LayerShape& shape, const LayerDims& d, Pass pass);
/// The fused backward: `attn.flash.bwd.recompute` (the scores Q.K^T recomputed, pass recompute)
/// and `attn.flash.bwd` (the four gradient GEMMs).
void add_fused_attention_backward(StepSequence& steps, const LayerShape& shape, const LayerDims& d);

} // namespace twocs::model::detail
