#include "mla_attention.hpp"

#include <twocs/units/numeric.hpp>

#include "memory_bound_costs.hpp"
#include "op_builders.hpp"
#include "tensor_parallel.hpp"

namespace twocs::model::detail {
namespace {

using units::as_double;

/// The sizes the projections use on one rank.
struct MlaDims {
  std::int64_t down_tokens = 0; // rows of the duplicated down projections: s b / t under sequence parallelism
  std::int64_t q_in = 0;        // the query up projection's input: q_lora_rank, or h without a query latent
  std::int64_t q_out = 0;       // (a / t) (nope + rope)
  std::int64_t kv_latent = 0;   // kv_lora_rank
  std::int64_t kv_out = 0;      // (a / t) (nope + v)
  std::int64_t rope = 0;        // qk_rope_head_dim
};

MlaDims mla_dims(const LayerShape& shape, const LayerDims& d) {
  const MlaConfig& c = *shape.model.mla;
  MlaDims m;
  m.down_tokens = shape.sequence_parallel ? d.tokens / shape.tensor : d.tokens;
  m.q_in = c.q_lora_rank > 0 ? c.q_lora_rank : shape.model.hidden;
  m.q_out = d.local_heads * (c.qk_nope_head_dim + c.qk_rope_head_dim);
  m.kv_latent = c.kv_lora_rank;
  m.kv_out = d.local_heads * (c.qk_nope_head_dim + c.v_head_dim);
  m.rope = c.qk_rope_head_dim;
  return m;
}

ComputeOp latent_norm(const LayerShape& shape, const char* name, double elements, Pass pass, bool backward) {
  // The latents' RMSNorms (DeepSeek-V2, Eq. 9-10 footnote; Megatron-Core q_layernorm, kv_layernorm).
  ComputeOp op = memory_bound(name, OpKind::normalization, pass, shape.dtype, elements,
                              norm_bytes(NormKind::rmsnorm, shape.kernels, shape.dtype, backward),
                              backward ? kernel_flops::norm_backward : kernel_flops::rms_norm_forward);
  return op;
}

/// `d` with the tensor-parallel buffer `width` wide (a latent instead of h).
LayerDims latent_dims(const LayerShape& shape, const LayerDims& d, std::int64_t width) {
  LayerDims l = d;
  l.activation = size_of(as_double(d.tokens) * as_double(width), shape.dtype);
  return l;
}

} // namespace

void add_mla_projections_forward(StepSequence& steps, const LayerShape& shape, const LayerDims& d, Pass pass) {
  const auto& m = shape.model;
  const MlaConfig& c = *m.mla;
  const MlaDims x = mla_dims(shape, d);
  const auto with_pass = pass_setter(pass);
  const Dtype dt = shape.linear_dtype();
  const bool q_latent = c.q_lora_rank > 0;
  if (q_latent) {
    steps.push_back(with_pass(linear_forward("attn.q_down", dt, x.down_tokens, m.hidden, c.q_lora_rank)));
    steps.push_back(latent_norm(shape, "attn.q_norm", as_double(x.down_tokens * c.q_lora_rank), pass, false));
  }
  steps.push_back(with_pass(linear_forward("attn.kv_down", dt, x.down_tokens, m.hidden, x.kv_latent + x.rope)));
  steps.push_back(latent_norm(shape, "attn.kv_norm", as_double(x.down_tokens * x.kv_latent), pass, false));
  // Sequence parallelism: gather the latents (and, without a query latent, the h-wide input).
  if (shape.sequence_parallel) {
    const std::int64_t gathered = (q_latent ? c.q_lora_rank : m.hidden) + x.kv_latent + x.rope;
    steps.push_back(with_pass(enter_region_forward(latent_dims(shape, d, gathered), "attn.latent")));
  }
  add_mla_up_projections_forward(steps, shape, d, pass);
}

void add_mla_up_projections_forward(StepSequence& steps, const LayerShape& shape, const LayerDims& d, Pass pass) {
  const MlaDims x = mla_dims(shape, d);
  const auto with_pass = pass_setter(pass);
  const Dtype dt = shape.linear_dtype();
  const bool q_latent = shape.model.mla->q_lora_rank > 0;
  steps.push_back(with_pass(linear_forward(q_latent ? "attn.q_up" : "attn.q", dt, d.tokens, x.q_in, x.q_out)));
  steps.push_back(with_pass(linear_forward("attn.kv_up", dt, d.tokens, x.kv_latent, x.kv_out)));
  steps.push_back(memory_bound("attn.rope", OpKind::elementwise, pass, shape.dtype, d.rope_elements,
                               rope_bytes(shape.kernels, shape.dtype), kernel_flops::rope));
}

void add_mla_projections_backward(StepSequence& steps, const LayerShape& shape, const LayerDims& d) {
  const auto& m = shape.model;
  const MlaConfig& c = *m.mla;
  const MlaDims x = mla_dims(shape, d);
  const Dtype dt = shape.linear_dtype();
  const bool q_latent = c.q_lora_rank > 0;
  steps.push_back(memory_bound("attn.rope.bwd", OpKind::elementwise, Pass::backward, shape.dtype, d.rope_elements,
                               rope_bytes(shape.kernels, shape.dtype), kernel_flops::rope));
  // Column-parallel up projections: their input gradients are reduced over the tensor group
  // (a reduce-scatter of the latent under sequence parallelism).
  add_column_parallel_backward(steps, shape, latent_dims(shape, d, x.kv_latent), "attn.kv_up", x.kv_latent, x.kv_out,
                               0);
  add_column_parallel_backward(steps, shape, latent_dims(shape, d, x.q_in), q_latent ? "attn.q_up" : "attn.q", x.q_in,
                               x.q_out, 0);
  ComputeOp kv_norm =
      latent_norm(shape, "attn.kv_norm.bwd", as_double(x.down_tokens * x.kv_latent), Pass::backward, true);
  kv_norm.grad_params = x.kv_latent;
  steps.push_back(kv_norm);
  steps.push_back(linear_input_grad("attn.kv_down.dgrad", dt, x.down_tokens, m.hidden, x.kv_latent + x.rope));
  steps.push_back(linear_weight_grad("attn.kv_down.wgrad", dt, x.down_tokens, m.hidden, x.kv_latent + x.rope, 0));
  if (!q_latent) return;
  ComputeOp q_norm =
      latent_norm(shape, "attn.q_norm.bwd", as_double(x.down_tokens * c.q_lora_rank), Pass::backward, true);
  q_norm.grad_params = c.q_lora_rank;
  steps.push_back(q_norm);
  steps.push_back(linear_input_grad("attn.q_down.dgrad", dt, x.down_tokens, m.hidden, c.q_lora_rank));
  steps.push_back(linear_weight_grad("attn.q_down.wgrad", dt, x.down_tokens, m.hidden, c.q_lora_rank, 0));
}

std::int64_t mla_projection_parameters(const TransformerConfig& m, std::int64_t tensor) {
  const MlaConfig& c = *m.mla;
  const std::int64_t h = m.hidden;
  const std::int64_t heads = m.heads / tensor;
  const std::int64_t q_up = heads * (c.qk_nope_head_dim + c.qk_rope_head_dim);
  // Duplicated down projections and their norms; column-parallel up projections.
  const std::int64_t q = c.q_lora_rank > 0 ? h * c.q_lora_rank + c.q_lora_rank + c.q_lora_rank * q_up : h * q_up;
  const std::int64_t kv = h * (c.kv_lora_rank + c.qk_rope_head_dim) + c.kv_lora_rank +
                          c.kv_lora_rank * heads * (c.qk_nope_head_dim + c.v_head_dim);
  return q + kv;
}

std::int64_t mla_replicated_parameters(const TransformerConfig& m) {
  const MlaConfig& c = *m.mla;
  const std::int64_t h = m.hidden;
  const std::int64_t q = c.q_lora_rank > 0 ? h * c.q_lora_rank + c.q_lora_rank : 0;
  return q + h * (c.kv_lora_rank + c.qk_rope_head_dim) + c.kv_lora_rank;
}

} // namespace twocs::model::detail
