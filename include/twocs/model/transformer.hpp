// The architecture of a GPT-style decoder-only Transformer (the workload file's `model:`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace twocs::model {

enum class FfnKind {
  gelu,   // two GEMMs h -> f -> h with GeLU between (GPT-3; Brown et al. 2020)
  swiglu, // three GEMMs: gate and up h -> f, down f -> h (Shazeer 2020; LLaMA)
  // two GEMMs h -> f -> h with relu(x)^2 between (So et al. 2021, "Primer", section 3; Nemotron-4,
  // Parmar et al. 2024, section 2)
  squared_relu,
};

[[nodiscard]] constexpr std::string_view to_string(FfnKind k) {
  return k == FfnKind::gelu ? "gelu" : k == FfnKind::swiglu ? "swiglu" : "squared_relu";
}
/// Gated FFNs (SwiGLU) have three GEMMs and an fc1 of twice the width; GeLU and squared ReLU two.
[[nodiscard]] constexpr bool is_gated(FfnKind k) { return k == FfnKind::swiglu; }

enum class NormKind {
  layernorm, // mean and variance, scale and shift (Ba et al. 2016; GPT-3)
  rmsnorm,   // root mean square, scale only (Zhang & Sennrich 2019; LLaMA)
};
enum class PositionKind {
  learned, // a learned s x h position table added after the embedding (GPT-2/GPT-3)
  rope,    // rotary embeddings applied to Q and K in every layer (Su et al. 2021; LLaMA)
};
/// causal: each token attends to the ones before it, so half of the s x s scores are masked;
/// FlashAttention skips the masked blocks (Dao 2023, FlashAttention-2, section 3.1.1).
enum class AttentionMask { causal, full };

/// Mixture-of-experts FFN (Shazeer et al. 2017; Fedus et al. 2022; Megatron-Core MoE):
/// a router picks top_k of `experts` per token; `shared_experts` run on every token.
struct MoeConfig {
  std::int64_t experts = 0;
  std::int64_t top_k = 1;
  std::int64_t expert_ffn_hidden = 0;
  std::int64_t shared_experts = 0;
  std::int64_t dense_layers = 0; // the first N layers keep the dense FFN
  double capacity_factor = 0;    // 0 = dropless (Megatron-Core --moe-expert-capacity-factor unset)
  double load_imbalance = 1.0;   // busiest expert's tokens over the mean (1 = balanced router)
};

/// Multi-head latent attention (DeepSeek-V2, Liu et al. 2024, section 2.1; DeepSeek-V3): queries
/// and keys/values pass through low-rank latents (h -> q_lora_rank -> a x (nope + rope),
/// h -> kv_lora_rank + rope -> a x (nope + v)), each latent RMSNorm-ed; keys share one rope part.
/// Megatron-Core's MLASelfAttention (megatron/core/transformer/multi_latent_attention.py).
struct MlaConfig {
  std::int64_t q_lora_rank = 0;      // 0: queries projected straight from h (DeepSeek-V2-Lite)
  std::int64_t kv_lora_rank = 0;     // the compressed key/value latent (DeepSeek-V3: 512)
  std::int64_t qk_nope_head_dim = 0; // per-head query/key part without RoPE (128)
  std::int64_t qk_rope_head_dim = 0; // per-head RoPE part; keys share one across heads (64)
  std::int64_t v_head_dim = 0;       // per-head value width (128)
};

struct TransformerConfig {
  std::string name;
  std::int64_t layers = 0;
  std::int64_t hidden = 0;     // h, the model width
  std::int64_t heads = 0;      // a, attention heads
  std::int64_t kv_heads = 0;   // key/value heads; < heads is grouped-query attention
  std::int64_t ffn_hidden = 0; // f, the MLP width (4h for GPT-3)
  FfnKind ffn_kind = FfnKind::gelu;
  std::int64_t vocab = 0;             // V
  std::int64_t seq_len = 0;           // s
  std::int64_t head_dim_override = 0; // `head_dim` when a * d_head != h (Qwen3); 0 = h / a
  NormKind norm = NormKind::layernorm;
  PositionKind position = PositionKind::learned;
  AttentionMask attention_mask = AttentionMask::causal;
  /// Sliding-window attention in every layer: each query attends itself and the W - 1 keys
  /// before it (Child et al. 2019's local attention; Mistral 7B, Jiang et al. 2023, section 2:
  /// W = 4096). 0: the whole causal prefix.
  std::int64_t sliding_window = 0;
  /// With a sliding window, every K-th layer (layers K - 1, 2K - 1, ... 0-based) attends the whole
  /// causal prefix and the others the window: Gemma 2 alternates (K = 2; Gemma Team 2024, section
  /// 2.1), Gemma 3 runs five local layers per global one (K = 6), gpt-oss alternates (K = 2). 0:
  /// every layer windowed.
  std::int64_t full_attention_every = 0;
  /// QK-norm: an RMSNorm over each head's query and key before rotary embeddings (Dehghani et al.
  /// 2023, "Scaling Vision Transformers to 22 Billion Parameters", section 3.1; Qwen3; Megatron-Core
  /// --qk-layernorm: q_layernorm and k_layernorm over hidden_size_per_attention_head, attention.py).
  bool qk_norm = false;
  /// Norms on the attention's and the FFN's outputs too, before each residual add ("sandwich"
  /// norms: Gemma 2, Gemma Team 2024, section 2.1, and Gemma 3; Megatron-Core's
  /// post_self_attn_layernorm and post_mlp_layernorm in TransformerLayer): four norms per layer.
  bool post_norms = false;
  bool tied_embeddings = true; // the output layer reuses the word embedding (GPT-3, Megatron-LM)
  /// Dropout after attention and after the MLP keeps a one-byte mask per element for backward
  /// (Megatron-LM's default 0.1, GPT-3, BLOOM's Megatron-DeepSpeed); Llama, Qwen and Mixtral
  /// train without (their configs' attention_dropout 0.0). Memory only: the fused
  /// bias-dropout-add kernel runs either way.
  bool dropout = true;
  std::optional<MoeConfig> moe;
  std::optional<MlaConfig> mla; // multi-head latent attention instead of a fused QKV projection
  /// Multi-token prediction depths D (DeepSeek-V3 report, section 2.2; Megatron-Core
  /// --mtp-num-layers): after the last layer, each depth embeds the tokens shifted by one more,
  /// projects them with the previous depth's hidden states, runs one transformer layer of the
  /// last layer's kind and a loss through the shared output head. 0: none.
  std::int64_t mtp_layers = 0;

  [[nodiscard]] std::int64_t head_dim() const { return head_dim_override > 0 ? head_dim_override : hidden / heads; }
  /// Per-head width of queries and keys (MLA: nope + rope) and of values (MLA: v_head_dim).
  [[nodiscard]] std::int64_t qk_head_dim() const {
    return mla ? mla->qk_nope_head_dim + mla->qk_rope_head_dim : head_dim();
  }
  [[nodiscard]] std::int64_t v_head_dim() const { return mla ? mla->v_head_dim : head_dim(); }
  /// Elements of one token's key and value per key/value head: 2 d_head (MLA: nope + rope + v,
  /// the up-projected per-head K and V that attention and context parallelism see).
  [[nodiscard]] std::int64_t kv_head_width() const { return qk_head_dim() + v_head_dim(); }
  /// Key/value heads one of `tensor` tensor-parallel ranks holds: kv_heads / t, at least 1
  /// (grouped K/V heads fewer than t are replicated, one per rank: Megatron-Core GQA). MLA
  /// up-projects a key and a value for every head from the latent (DeepSeek-V2, Eq. 10-11), so
  /// there it is heads / t whatever kv_heads says.
  [[nodiscard]] std::int64_t kv_heads_per_rank(std::int64_t tensor) const {
    const std::int64_t kv = mla ? heads : kv_heads;
    return kv >= tensor ? kv / tensor : 1;
  }
  /// Elements of one rank's K and V for `micro_batch` sequences of its s / cp tokens:
  /// b (s / cp) (kv heads per rank) x kv_head_width (context parallelism's exchanged block).
  [[nodiscard]] double context_kv_elements(std::int64_t micro_batch, std::int64_t tensor, std::int64_t context) const {
    const std::int64_t tokens = micro_batch * (seq_len / context); // context parallelism splits s evenly
    return static_cast<double>(tokens) * static_cast<double>(kv_heads_per_rank(tensor)) *
           static_cast<double>(kv_head_width());
  }
  /// Width of the attention-output projection's input: a * d_head (= h unless head_dim is set;
  /// a * v_head_dim with MLA); also the query projection's output without MLA.
  [[nodiscard]] std::int64_t attention_width() const { return heads * v_head_dim(); }
  /// Width of the fused QKV projection output: a * d_head for Q plus 2 * kv_heads * d_head for K and V.
  [[nodiscard]] std::int64_t qkv_width() const { return attention_width() + 2 * kv_heads * head_dim(); }
  /// The window of layer `index` (0-based over the whole model; the multi-token-prediction
  /// depths continue the count): sliding_window, or 0 for a layer that attends the whole prefix.
  [[nodiscard]] std::int64_t window_at(std::int64_t index) const {
    if (full_attention_every > 0 && (index + 1) % full_attention_every == 0) return 0;
    return sliding_window;
  }
  /// True when layer `index` (0-based over the whole model) has a mixture-of-experts FFN.
  [[nodiscard]] bool is_moe_layer(std::int64_t index) const { return moe && index >= moe->dense_layers; }
  /// Multi-token prediction embeds its shifted tokens on the last stage: a stage that runs it
  /// without holding the input embedding keeps its own copy of an untied one (Megatron-Core
  /// MultiTokenPredictionBlock), whose gradient is final there and all-reduced with the first
  /// stage's (finalize_model_grads.py); a tied embedding's copy is the output layer's weight.
  [[nodiscard]] bool mtp_keeps_embedding_copy(bool stage_has_embedding) const {
    return mtp_layers > 0 && !tied_embeddings && !stage_has_embedding;
  }
};

} // namespace twocs::model
