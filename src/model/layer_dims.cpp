#include "layer_dims.hpp"

#include <twocs/units/numeric.hpp>

namespace twocs::model::detail {
namespace {
using units::as_double;
} // namespace

LayerDims dims_of(const LayerShape& shape) {
  const auto& m = shape.model;
  const std::int64_t t = shape.tensor;
  LayerDims d;
  // Context parallelism: each rank holds s / cp tokens of every sequence (Megatron-Core).
  d.tokens = shape.micro_batch * m.seq_len / shape.context;
  const double bsh = as_double(d.tokens) * as_double(m.hidden);
  d.norm_elements = shape.sequence_parallel ? bsh / as_double(t) : bsh;
  d.local_heads = m.heads / t;
  d.attention_scores =
      as_double(shape.micro_batch) * as_double(d.local_heads) * as_double(m.seq_len) * as_double(m.seq_len);
  d.qkv_local = m.qkv_width() / t;
  d.attention_local = m.attention_width() / t;
  const std::int64_t ffn_columns = m.ffn_kind == FfnKind::swiglu ? 2 * m.ffn_hidden : m.ffn_hidden;
  d.ffn_in_local = ffn_columns / t;
  d.ffn_out_local = m.ffn_hidden / t;
  d.activation = size_of(bsh, shape.dtype);
  const std::int64_t kv_local = m.kv_heads_per_rank(t);
  d.kv_local_heads = kv_local;
  d.rope_elements = as_double(d.tokens) * as_double(d.local_heads + kv_local) * as_double(m.head_dim());
  // MLA rotates each head's rope part of Q and one key rope part shared by the heads (DeepSeek-V2, Eq. 14-15).
  if (m.mla) d.rope_elements = as_double(d.tokens) * as_double(d.local_heads + 1) * as_double(m.mla->qk_rope_head_dim);
  // A causal FlashAttention-2 kernel skips the key blocks above the diagonal: s / 2 keys per
  // query on average (Dao 2023, section 3.1.1), and with a sliding window those before it too
  // (FlashAttention-2's window_size; AttentionShape::attended). The unfused path computes all
  // s x s scores and masks the rest: that share is no model work.
  const AttentionShape whole{
      1, m.seq_len, m.seq_len, 1, m.attention_mask == AttentionMask::causal, 0, shape.attention_window()};
  d.attended_keys = whole.attended();
  d.masked_share = 1.0 - as_double(d.attended_keys) / as_double(m.seq_len);
  return d;
}

} // namespace twocs::model::detail
