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
          .qk_norm = true,
          .tied_embeddings = false,
          .dropout = false,
          .moe = model::MoeConfig{128, 8, 1536, 0, 0, 0, 1.0}};
}

/// DeepSeek-V3 (Liu et al. 2024, arXiv 2412.19437, and its released config.json): 61 layers, the
/// first 3 dense (FFN 18432), 256 routed experts (top-8, width 2048) and 1 shared, MLA with
/// q_lora_rank 1536, kv_lora_rank 512, qk_nope 128, qk_rope 64, v_head_dim 128; s = 4096.
inline model::TransformerConfig deepseek_v3() {
  auto m = qwen3_235b();
  m.name = "deepseek-v3";
  m.qk_norm = false; // MLA normalises its latents instead
  m.layers = 61;
  m.hidden = 7168;
  m.heads = 128;
  m.kv_heads = 128;
  m.ffn_hidden = 18432;
  m.vocab = 129280;
  m.head_dim_override = 0;
  m.moe = model::MoeConfig{256, 8, 2048, 1, 3, 0, 1.0};
  m.mla = model::MlaConfig{1536, 512, 128, 64, 128};
  return m;
}

/// Mistral 7B (Jiang et al. 2023, Table 1): 32 layers, h 4096, 32 heads, 8 KV heads, FFN 14336,
/// vocabulary 32000, a sliding window of `window` tokens (4096 published), sequence `seq`.
inline model::TransformerConfig mistral_7b(std::int64_t seq, std::int64_t window) {
  return {.name = "mistral-7b",
          .layers = 32,
          .hidden = 4096,
          .heads = 32,
          .kv_heads = 8,
          .ffn_hidden = 14336,
          .ffn_kind = model::FfnKind::swiglu,
          .vocab = 32000,
          .seq_len = seq,
          .norm = model::NormKind::rmsnorm,
          .position = model::PositionKind::rope,
          .sliding_window = window,
          .tied_embeddings = false,
          .dropout = false};
}

} // namespace twocs::testing
