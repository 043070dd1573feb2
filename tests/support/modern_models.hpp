// Today's published models as tests build them: Llama 3 70B (dense, GQA, SwiGLU) and
// Qwen3-235B-A22B (mixture of experts), each from its released config.json.
#pragma once

#include <twocs/model/transformer.hpp>

namespace twocs::testing {

/// Llama 3 70B (Dubey et al. 2024, Table 3; untied embeddings as released), s = 8192.
inline model::TransformerConfig llama3_70b() {
  model::TransformerConfig m;
  m.name = "llama3-70b";
  m.layers = 80;
  m.hidden = 8192;
  m.heads = 64;
  m.kv_heads = 8;
  m.ffn_hidden = 28672;
  m.ffn_kind = model::FfnKind::swiglu;
  m.vocab = 128256;
  m.seq_len = 8192;
  m.norm = model::NormKind::rmsnorm;
  m.position = model::PositionKind::rope;
  m.tied_embeddings = false;
  return m;
}

/// Qwen3-235B-A22B (released config.json): 128 experts, 8 active, expert FFN 1536, s = 4096.
inline model::TransformerConfig qwen3_235b() {
  model::TransformerConfig m;
  m.name = "qwen3-235b-a22b";
  m.layers = 94;
  m.hidden = 4096;
  m.heads = 64;
  m.kv_heads = 4;
  m.head_dim_override = 128;
  m.ffn_hidden = 12288;
  m.ffn_kind = model::FfnKind::swiglu;
  m.vocab = 151936;
  m.seq_len = 4096;
  m.norm = model::NormKind::rmsnorm;
  m.position = model::PositionKind::rope;
  m.tied_embeddings = false;
  m.moe = model::MoeConfig{128, 8, 1536, 0, 0, 0, 1.0};
  return m;
}

} // namespace twocs::testing
