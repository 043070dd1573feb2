#include <twocs/model/layer_activations.hpp>

#include <twocs/units/numeric.hpp>

namespace twocs::model {

ActivationUnits layer_activation_units(const TransformerConfig& m, bool moe_ffn, const RecomputeModules& discarded) {
  const bool moe = moe_ffn && m.moe.has_value();
  using units::as_double;
  const double h = as_double(m.hidden);
  const double e = 2.0; // 16-bit activations (Korthikanti et al. 2022, Table 2)
  ActivationUnits u;
  // Attention: the norm's input, the QKV input (the norm's output), Q, K, V, the attention output.
  const double q = e * as_double(m.attention_width()) / h;
  u.replicated += e + e;
  if (m.mla) {
    // MLA (Megatron-Core MLASelfAttention): the latents, before and after their RMSNorms, are
    // gathered whole on every rank for the up-projections (q_lora, and kv_lora plus the shared
    // RoPE key part); every head gets Q and K of nope + rope and V of v_head_dim.
    const double qk = e * as_double(m.heads * m.qk_head_dim()) / h;
    const double v = e * as_double(m.heads * m.v_head_dim()) / h;
    const auto& a = *m.mla;
    u.replicated += 2 * e * as_double(a.q_lora_rank + a.kv_lora_rank + a.qk_rope_head_dim) / h;
    u.split += qk + qk + v + q;
    if (discarded.mla_up_proj) u.split -= qk + qk + v;
    if (discarded.layernorm) u.replicated -= e; // the input norm's output, the down projections' input
  } else {
    const double kv = 2 * e * as_double(m.kv_heads * m.head_dim()) / h;
    u.split += q + kv + q;
  }
  // MLP: the norm's input and the fc1 input; per routed copy the fc1 input, output and fc2 input.
  const bool swiglu = m.ffn_kind == FfnKind::swiglu;
  const auto ffn = [&](double width, double copies) { return copies * e * (width * (swiglu ? 2.0 : 1.0) + width) / h; };
  u.replicated += e + e;
  // FP8 halves the QKV and fc1 inputs and the attention-output and fc2 inputs (per routed copy).
  if (moe) {
    // Megatron-Core's dispatcher hands each expert its tokens' copies (top_k per token; the busiest
    // rank load_imbalance times the mean), sequence-split over the tensor group (expert-tensor
    // parallelism 1 needs sequence parallelism); shared experts see every token once.
    const double copies = as_double(m.moe->top_k) * m.moe->load_imbalance;
    const double expert_ffn = as_double(m.moe->expert_ffn_hidden);
    u.split += copies * e + ffn(expert_ffn, copies);
    if (m.moe->shared_experts > 0) u.split += ffn(as_double(m.moe->shared_experts) * expert_ffn, 1.0);
    u.fp8_replicated = e / 2;
    u.fp8_split = q / 2 + copies * (e + e * expert_ffn / h) / 2;
    if (discarded.layernorm) u.replicated -= e; // the pre-MLP norm's output, the router's input
    if (discarded.moe_act) {                    // fc2's input per routed copy
      u.split -= copies * e * expert_ffn / h;
      u.fp8_split -= copies * e * expert_ffn / h / 2;
    }
  } else {
    u.split += ffn(as_double(m.ffn_hidden), 1.0);
    u.fp8_replicated = e;
    u.fp8_split = q / 2 + e * as_double(m.ffn_hidden) / h / 2;
    if (discarded.mlp) { // the checkpoint keeps the MLP's input (the norm's input) only
      u.replicated -= e;
      u.split -= ffn(as_double(m.ffn_hidden), 1.0);
      u.fp8_replicated -= e / 2;
      u.fp8_split -= e * as_double(m.ffn_hidden) / h / 2;
    }
  }
  if (m.mla && discarded.layernorm) u.fp8_replicated -= e / 2; // the down projections' FP8 input
  // One-byte dropout masks after the attention output and after fc2 (Megatron-LM's 0.1 default).
  if (m.dropout) u.replicated += 2.0;
  return u;
}

} // namespace twocs::model
