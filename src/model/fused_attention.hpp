// Private: the attention core as one fused FlashAttention kernel (training.attention: fused),
// in place of the scores GEMM, softmax, dropout and context GEMM and their backward.
#pragma once

#include <twocs/model/layer_ops.hpp>

#include "layer_dims.hpp"

#include <cstdint>
#include <string>

namespace twocs::model::detail {

/// The work of one FlashAttention kernel call: `queries` rows against `keys` keys per head, of
/// which each query visits `attended` on average (keys / 2 under a causal mask).
struct FlashGeometry {
  std::int64_t heads = 0; // b * a / t attention heads of this rank
  std::int64_t queries = 0;
  std::int64_t keys = 0;
  std::int64_t attended = 0;
};

/// The whole sequence on one rank: s queries against s keys.
[[nodiscard]] FlashGeometry flash_geometry(const LayerShape& shape, const LayerDims& d);
/// One forward kernel over `g` (Q, K, V read once, O and the fp32 row statistics written).
[[nodiscard]] ComputeOp flash_forward(std::string name, const LayerShape& shape, const FlashGeometry& g, Pass pass);
/// The backward kernels over `g`: `name`.recompute (Q.K^T again, pass recompute) and `name`.
void add_flash_backward(StepSequence& steps, const std::string& name, const LayerShape& shape, const FlashGeometry& g);

/// The fused forward kernel `attn.flash` (pass `pass`: forward, or recompute under selective
/// recomputation).
void add_fused_attention_forward(StepSequence& steps, const LayerShape& shape, const LayerDims& d, Pass pass);
/// The fused backward: `attn.flash.bwd.recompute` (the scores Q.K^T recomputed, pass recompute)
/// and `attn.flash.bwd` (the four gradient GEMMs).
void add_fused_attention_backward(StepSequence& steps, const LayerShape& shape, const LayerDims& d);

} // namespace twocs::model::detail
