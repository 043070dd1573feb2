// Sizes beyond any model built or planned are refused before anything multiplies them: each
// count against its limit, then the parameters the counts make together, estimated in floating
// point (an integer estimate could itself overflow). Below the limits every product the model,
// cost and lowering layers form stays exact (size_limits.hpp).
#include "validate_sizes.hpp"

#include <algorithm>

#include <fmt/format.h>

#include <twocs/error.hpp>
#include <twocs/model/size_limits.hpp>

namespace twocs::model::detail {
namespace {

double as_real(std::int64_t v) { return static_cast<double>(v); }

void require_at_least(std::int64_t value, std::int64_t low, const char* key) {
  if (value >= low) return;
  throw InputError(fmt::format("{} must be at least {}, got {}", key, low, value), key,
                   low == 0 ? "give 0 (none, the default) or more" : fmt::format("give a count of at least {}", low));
}

void require_between(std::int64_t value, std::int64_t low, std::int64_t high, const char* key) {
  require_at_least(value, low, key);
  require_at_most(value, high, key);
}

/// One layer's attention weights: the QKV and output projections, or MLA's (mla_attention.hpp).
double attention_parameters(const TransformerConfig& m) {
  const double h = as_real(m.hidden);
  const double a = as_real(m.heads);
  if (!m.mla) {
    const double d = as_real(m.head_dim());
    return (h + 1) * (a * d + 2 * as_real(m.kv_heads) * d) + a * d * h + 3 * h; // weights and biases
  }
  const MlaConfig& c = *m.mla;
  const double q_up = a * as_real(c.qk_nope_head_dim + c.qk_rope_head_dim);
  const double q = c.q_lora_rank > 0 ? (h + 1 + q_up) * as_real(c.q_lora_rank) : h * q_up;
  const double kv = h * as_real(c.kv_lora_rank + c.qk_rope_head_dim) +
                    as_real(c.kv_lora_rank) * (1 + a * as_real(c.qk_nope_head_dim + c.v_head_dim));
  return q + kv + a * as_real(c.v_head_dim) * h + h;
}

/// An MLP of `width` on `h` with its biases: two or (SwiGLU) three weight matrices.
double mlp_parameters(double h, double width, FfnKind kind) {
  return h * width * (kind == FfnKind::swiglu ? 3.0 : 2.0) + 2 * width + h;
}

void validate_attention_sizes(const TransformerConfig& m) {
  require_at_most(m.heads, limits::heads, "model.heads");
  require_at_most(m.kv_heads, limits::heads, "model.kv_heads");
  require_between(m.head_dim_override, 0, limits::head_dim, "model.head_dim");
  require_between(m.sliding_window, 0, limits::seq_len, "model.sliding_window");
  require_between(m.full_attention_every, 0, limits::layers, "model.full_attention_every");
  require_between(m.mtp_layers, 0, limits::mtp_layers, "model.mtp_layers");
  if (!m.mla) return;
  require_between(m.mla->q_lora_rank, 0, limits::lora_rank, "model.mla.q_lora_rank");
  require_at_most(m.mla->kv_lora_rank, limits::lora_rank, "model.mla.kv_lora_rank");
  require_at_most(m.mla->qk_nope_head_dim, limits::head_dim, "model.mla.qk_nope_head_dim");
  require_at_most(m.mla->qk_rope_head_dim, limits::head_dim, "model.mla.qk_rope_head_dim");
  require_at_most(m.mla->v_head_dim, limits::head_dim, "model.mla.v_head_dim");
}

void validate_moe_sizes(const MoeConfig& moe) {
  require_between(moe.experts, 1, limits::experts, "model.moe.experts");
  require_between(moe.top_k, 1, moe.experts, "model.moe.top_k");
  require_between(moe.expert_ffn_hidden, 1, limits::ffn_hidden, "model.moe.expert_ffn_hidden");
  require_between(moe.shared_experts, 0, limits::experts, "model.moe.shared_experts");
  require_at_least(moe.dense_layers, 0, "model.moe.dense_layers");
  // The shared experts run as one dense MLP of their summed width.
  if (moe.shared_experts * moe.expert_ffn_hidden > limits::ffn_hidden)
    throw InputError(fmt::format("model.moe.shared_experts x expert_ffn_hidden = {} x {} is a shared MLP wider than "
                                 "twocs models (at most {}, as model.ffn_hidden)",
                                 moe.shared_experts, moe.expert_ffn_hidden, limits::ffn_hidden),
                     "model.moe.shared_experts", "check the value: DeepSeek-V3 has 1 shared expert, Qwen2-MoE 4");
}

/// The parameters routed experts hold, of estimate_parameters's.
double routed_parameters(const TransformerConfig& m) {
  if (!m.moe) return 0;
  return as_real(m.layers + m.mtp_layers - std::min(m.moe->dense_layers, m.layers)) * as_real(m.moe->experts) *
         mlp_parameters(as_real(m.hidden), as_real(m.moe->expert_ffn_hidden), m.ffn_kind);
}

void require_model_size(const TransformerConfig& m) {
  const double parameters = estimate_parameters(m);
  if (parameters <= limits::parameters) return;
  const bool experts = routed_parameters(m) > parameters / 2;
  throw InputError(fmt::format("these sizes make a model of about {:.3g} parameters, beyond what twocs models (at "
                               "most {:.3g}; the largest models announced hold about 2e12)",
                               parameters, limits::parameters),
                   experts ? "model.moe.experts" : "model.layers",
                   experts ? "check model.moe.experts and expert_ffn_hidden: their product times model.hidden and "
                             "model.layers is what the routed experts hold"
                           : "check model.layers, hidden, ffn_hidden, heads and head_dim");
}

} // namespace

void require_at_most(std::int64_t value, std::int64_t limit, const char* key) {
  if (value > limit)
    throw InputError(fmt::format("{} = {} is beyond what twocs models (at most {})", key, value, limit), key,
                     "check the value: it is larger than any Transformer built or announced");
}

} // namespace twocs::model::detail

namespace twocs::model {

double estimate_parameters(const TransformerConfig& m) {
  using namespace detail; // the helpers above
  const double h = as_real(m.hidden);
  // Norms (four with post_norms, two scale-and-shift each) and QK-norm's two head_dim scales.
  const double norms = 8 * h + 2 * as_real(m.qk_head_dim());
  const double dense_ffn = mlp_parameters(h, as_real(m.ffn_hidden), m.ffn_kind);
  const double layers = as_real(m.layers + m.mtp_layers);
  double dense_layers = layers;
  double moe_ffn = 0;
  if (m.moe) {
    const double fe = as_real(m.moe->expert_ffn_hidden);
    moe_ffn = as_real(m.moe->experts) * (mlp_parameters(h, fe, m.ffn_kind) + h) +
              mlp_parameters(h, as_real(m.moe->shared_experts) * fe, m.ffn_kind);
    dense_layers = as_real(std::min(m.moe->dense_layers, m.layers));
  }
  const double vocab = as_real(m.vocab) + 128.0; // a rank's slice is padded by fewer than 128 rows
  // The word embedding, the output layer's own when untied (and multi-token prediction's copy).
  const double word_tables = m.tied_embeddings ? 1.0 : (m.mtp_layers > 0 ? 3.0 : 2.0);
  const double positions = m.position == PositionKind::learned ? as_real(m.seq_len) : 0.0;
  const double mtp_blocks = as_real(m.mtp_layers) * (2 * h * h + 3 * h);
  return layers * (attention_parameters(m) + norms) + dense_layers * dense_ffn + (layers - dense_layers) * moe_ffn +
         (word_tables * vocab + positions) * h + mtp_blocks;
}

} // namespace twocs::model

namespace twocs::model::detail {

void validate_sizes(const TransformerConfig& m) {
  require_at_most(m.layers, limits::layers, "model.layers");
  require_at_most(m.hidden, limits::hidden, "model.hidden");
  require_at_most(m.ffn_hidden, limits::ffn_hidden, "model.ffn_hidden");
  require_at_most(m.vocab, limits::vocab, "model.vocab");
  require_at_most(m.seq_len, limits::seq_len, "model.seq_len");
  validate_attention_sizes(m);
  if (m.moe) validate_moe_sizes(*m.moe);
  require_model_size(m);
}

} // namespace twocs::model::detail
