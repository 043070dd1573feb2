// Today's published models as tests build them: Llama 3 70B (dense, GQA, SwiGLU) and
// Qwen3-235B-A22B (mixture of experts), each from its released config.json.
#pragma once

#include <twocs/model/transformer.hpp>

namespace twocs::testing {

/// Llama 3 70B (Dubey et al. 2024, Table 3; untied embeddings as released), s = 8192.
inline model::TransformerConfig llama3_70b() {
  return {.name = "llama3-70b",
          .layers = 80,
          .hidden = 8192,
          .heads = 64,
          .kv_heads = 8,
          .ffn_hidden = 28672,
          .ffn_kind = model::FfnKind::swiglu,
          .vocab = 128256,
          .seq_len = 8192,
          .norm = model::NormKind::rmsnorm,
          .position = model::PositionKind::rope,
          .tied_embeddings = false,
          .dropout = false};
}

/// Qwen3-235B-A22B (released config.json): 128 experts, 8 active, expert FFN 1536, s = 4096.
inline model::TransformerConfig qwen3_235b() {
  return {.name = "qwen3-235b-a22b",
          .layers = 94,
          .hidden = 4096,
          .heads = 64,
          .kv_heads = 4,
          .ffn_hidden = 12288,
          .ffn_kind = model::FfnKind::swiglu,
          .vocab = 151936,
          .seq_len = 4096,
          .head_dim_override = 128,
          .norm = model::NormKind::rmsnorm,
          .position = model::PositionKind::rope,
          .tied_embeddings = false,
          .dropout = false,
          .moe = model::MoeConfig{128, 8, 1536, 0, 0, 0, 1.0}};
}

} // namespace twocs::testing
