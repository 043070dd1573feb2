// The architecture of a GPT-style decoder-only Transformer (the workload file's `model:`).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace twocs::model {

enum class FfnKind {
  gelu,   // two GEMMs h -> f -> h with GeLU between (GPT-3; Brown et al. 2020)
  swiglu, // three GEMMs: gate and up h -> f, down f -> h (Shazeer 2020; LLaMA)
};

[[nodiscard]] constexpr std::string_view to_string(FfnKind k) { return k == FfnKind::gelu ? "gelu" : "swiglu"; }

struct TransformerConfig {
  std::string name;
  std::int64_t layers = 0;
  std::int64_t hidden = 0;     // h, the model width
  std::int64_t heads = 0;      // a, attention heads
  std::int64_t kv_heads = 0;   // key/value heads; < heads is grouped-query attention
  std::int64_t ffn_hidden = 0; // f, the MLP width (4h for GPT-3)
  FfnKind ffn_kind = FfnKind::gelu;
  std::int64_t vocab = 0;   // V
  std::int64_t seq_len = 0; // s

  [[nodiscard]] std::int64_t head_dim() const { return hidden / heads; }
  /// Width of the fused QKV projection output: h for Q plus 2 * kv_heads * head_dim for K and V.
  [[nodiscard]] std::int64_t qkv_width() const { return hidden + 2 * kv_heads * head_dim(); }
};

} // namespace twocs::model
