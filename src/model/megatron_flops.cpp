#include <twocs/model/megatron_flops.hpp>

#include <algorithm>

namespace twocs::model {
namespace {

/// Megatron-LM pads the vocabulary to a multiple of --make-vocab-size-divisible-by (128).
// NOLINTNEXTLINE(bugprone-integer-division): rounding up to a multiple of 128 is the point
double padded_vocab(std::int64_t vocab) { return static_cast<double>((vocab + 127) / 128 * 128); }

/// The MLP term (f/h) k m + (f_sh/h) m of one layer, dense or MoE.
double layer_mlp_term(const TransformerConfig& m, bool moe_layer) {
  const double h = static_cast<double>(m.hidden);
  const double gated = m.ffn_kind == FfnKind::swiglu ? 1.5 : 1.0; // gated_linear_multiplier
  if (!moe_layer) return static_cast<double>(m.ffn_hidden) / h * gated;
  const MoeConfig& e = *m.moe;
  const double routed = static_cast<double>(e.expert_ffn_hidden) / h * static_cast<double>(e.top_k) * gated;
  const double shared = static_cast<double>(e.shared_experts * e.expert_ffn_hidden) / h * gated;
  return routed + shared;
}

/// The MLP terms summed over the model's layers and its multi-token-prediction layers, which
/// count as the last layer's kind ("num_moe_layers += last_layer_is_moe * mtp_num_layers").
double mlp_terms(const TransformerConfig& m) {
  const double dense_layers = m.moe ? static_cast<double>(std::min(m.moe->dense_layers, m.layers)) : 0.0;
  const double layers = static_cast<double>(m.layers);
  const double main = m.moe
                          ? dense_layers * layer_mlp_term(m, false) + (layers - dense_layers) * layer_mlp_term(m, true)
                          : layers * layer_mlp_term(m, false);
  return main + static_cast<double>(m.mtp_layers) * layer_mlp_term(m, m.is_moe_layer(m.layers));
}

/// Multi-head latent attention in units of 12 h^2 per token and layer (training.py, the
/// multi_latent_attention branch): 6 x [q_lora (h + a (nope + rope) + 1) + kv_lora (h + a (nope
/// + v) + 1) + h rope + a v h] token-linear, plus 6 s a (nope + rope + v) / 2 for the causal core.
double mla_attention_term(const TransformerConfig& m) {
  const MlaConfig& c = *m.mla;
  const double h = static_cast<double>(m.hidden);
  const double s = static_cast<double>(m.seq_len);
  const double a = static_cast<double>(m.heads);
  const double qk = static_cast<double>(c.qk_nope_head_dim + c.qk_rope_head_dim);
  const double v = static_cast<double>(c.v_head_dim);
  const double q_lora = static_cast<double>(c.q_lora_rank);
  const double kv_lora = static_cast<double>(c.kv_lora_rank);
  const double q = c.q_lora_rank > 0 ? q_lora * (h + a * qk + 1) : h * a * qk;
  const double kv = kv_lora * (h + a * (static_cast<double>(c.qk_nope_head_dim) + v) + 1) +
                    h * static_cast<double>(c.qk_rope_head_dim);
  const double linear = q + kv + a * v * h;
  const double core = s * (a * qk / 2 + a * v / 2); // "/2 accounts for the causal mask"
  return (linear + core) / (2.0 * h * h);
}

} // namespace

units::Flops megatron_model_flops(const TransformerConfig& m, std::int64_t sequences) {
  const double h = static_cast<double>(m.hidden);
  const double s = static_cast<double>(m.seq_len);
  const double depths = static_cast<double>(m.mtp_layers);
  const double layers = static_cast<double>(m.layers) + depths;  // "num_layers = args.num_layers + mtp_num_layers"
  const double q = static_cast<double>(m.attention_width()) / h; // query_projection_to_hidden_size_ratio
  // "Only half of the attention matrix is non-zero and needs to be multiplied with V" (causal).
  const double attention =
      m.mla ? mla_attention_term(m)
            : (1.0 + static_cast<double>(m.kv_heads) / static_cast<double>(m.heads) + s / h / 2.0) * q;
  // "MTP + final logit": each depth has its own logits.
  const double logits = padded_vocab(m.vocab) / (2.0 * h) * (depths + 1.0);
  // "MTP norms and proj": 3 h for the norms and 2 h^2 for eh_proj, in units of 12 h^2.
  const double mtp_blocks = depths * (3.0 * h + 2.0 * h * h) / (2.0 * h * h);
  // 12 = 3 (forward, weight gradient, data gradient) x 2 (two GEMMs per block) x 2 (FLOPs per MAC).
  const double per_layer_unit = 12.0 * static_cast<double>(sequences) * s * h * h;
  return units::Flops(per_layer_unit * (layers * attention + mlp_terms(m) + logits + mtp_blocks));
}

} // namespace twocs::model
