// Private: the sizes of one transformer layer on one tensor-parallel rank, shared by the
// forward and backward operator lists.
#pragma once

#include <cstdint>

#include <twocs/model/layer_ops.hpp>

namespace twocs::model::detail {

struct LayerDims {
  std::int64_t tokens = 0;          // b * s / cp: rows of every GEMM
  double norm_elements = 0;         // b * s * h, divided by t under sequence parallelism
  double attention_scores = 0;      // b * (a / t) * s * s
  std::int64_t local_heads = 0;     // a / t
  std::int64_t qkv_local = 0;       // columns of the QKV GEMM on this rank
  std::int64_t attention_local = 0; // a * d_head / t: rows of the attention-output GEMM
  std::int64_t ffn_in_local = 0;    // columns of fc1 (doubled for SwiGLU's gate and up)
  std::int64_t ffn_out_local = 0;   // rows of fc2 = f / t
  units::Bytes activation;          // b * s / cp * h elements: the tensor-parallel collective buffer
  double rope_elements = 0;         // b * s * (a + g) / t * d_head: the Q and K values rotary embeddings touch
  std::int64_t kv_local_heads = 0;  // g / t, at least 1 (grouped K/V heads fewer than t are replicated)
  double masked_share = 0;          // of the s x s scores, the masked ones: 1/2 causal, more with a window
  std::int64_t attended_keys = 0;   // keys a fused kernel visits per query: s, s / 2 causal, fewer windowed
};

[[nodiscard]] LayerDims dims_of(const LayerShape& shape);

} // namespace twocs::model::detail
