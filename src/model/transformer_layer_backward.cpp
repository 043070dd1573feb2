// Backward pass of one Megatron-LM GPT layer per tensor-parallel rank, in execution order.
// Every linear layer runs an input-gradient GEMM (dgrad) and a weight-gradient GEMM (wgrad),
// each with the forward's FLOPs (Narayanan et al. SC'21, section 5.1: backward = 2x forward).
// The column-parallel layers (QKV, fc1) all-reduce their input gradient across the tensor-
// parallel group ("f" backward; Shoeybi et al. 2019, Fig. 3); Megatron-LM launches it
// asynchronously and overlaps it with the wgrad GEMM (--async-tensor-model-parallel-allreduce,
// Korthikanti et al. 2022, section 4.2.2 for the sequence-parallel variant).
#include <twocs/model/layer_ops.hpp>
#include <twocs/units/numeric.hpp>

#include "context_attention.hpp"
#include "fp8_quantize.hpp"
#include "fused_attention.hpp"
#include "layer_dims.hpp"
#include "layer_graph.hpp"
#include "memory_bound_costs.hpp"
#include "mla_attention.hpp"
#include "moe_layer.hpp"
#include "op_builders.hpp"
#include "tensor_parallel.hpp"

namespace twocs::model {
namespace {

using detail::add_column_parallel_backward;
using detail::collective;
using detail::LayerDims;
using detail::memory_bound;

using units::as_double;

/// Backward of a row-parallel linear layer (attention output, fc2). Under sequence
/// parallelism the forward reduce-scatter's backward all-gathers the output gradient first.
void add_row_parallel_backward(StepSequence& steps, const LayerShape& shape, const LayerDims& d,
                               const std::string& name, std::int64_t in, std::int64_t out) {
  const detail::RowGemm dgrad = [&](std::int64_t rows) {
    return detail::linear_input_grad(name + ".dgrad", shape.linear_dtype(), rows, in, out);
  };
  // The output gradient, cast to FP8 for both gradient GEMMs. Under sequence parallelism (which
  // tp_comm needs) on the local shard before it is gathered, as every framework gathers it in FP8
  // (gathers_fp8: Transformer Engine, torchao's Float8RowwiseParallel with
  // NoopFwToFloat8BwDynamic), chunk by chunk under tp_comm.
  if (shape.sequence_parallel) {
    detail::add_fp8_quantize(steps, shape, name + ".grad", Pass::backward,
                             as_double(d.tokens) * as_double(out) / as_double(shape.tensor),
                             detail::Fp8Source::standalone, true, true);
    detail::add_gathered_gemm(steps, shape, d, name, Pass::backward, dgrad);
    if (auto transpose = detail::fp8_transpose_for_wgrad(shape, name + ".grad", as_double(d.tokens) * as_double(out),
                                                         detail::Fp8Source::standalone, true))
      steps.push_back(std::move(*transpose));
  } else {
    detail::add_fp8_quantize(steps, shape, name + ".grad", Pass::backward, as_double(d.tokens) * as_double(out),
                             detail::Fp8Source::standalone, true);
    steps.push_back(dgrad(d.tokens));
  }
  // The bias of a row-parallel layer is replicated: each rank holds all `out` entries.
  steps.push_back(detail::linear_weight_grad(name + ".wgrad", shape.linear_dtype(), d.tokens, in, out, out));
}

/// The input gradients of `projections` Linear modules that share one input, summed
/// (LayerShape::separate_projections): beside the one output a fused GEMM writes, the other
/// modules' `[tokens, in]` gradients are written and read again. Under torch.compile the sum fuses
/// into its consumer (the norm's backward, or the reduce-scatter's layout copy under DTensor), so
/// that is all it adds; eager autograd adds them pairwise, each add reading two and writing one.
void add_projection_grad_sum(StepSequence& steps, const LayerShape& shape, const LayerDims& d, const std::string& name,
                             std::int64_t in, std::int64_t projections) {
  if (!shape.separate_projections || projections < 2) return;
  const double extra = as_double(projections - 1);
  const double passes = shape.kernels == KernelFusion::eager ? 1.0 + 3.0 : 1.0 + 1.0; // per extra gradient
  ComputeOp sum = memory_bound(name + ".dgrad.sum", OpKind::elementwise, Pass::backward, shape.dtype,
                               as_double(d.tokens) * as_double(in), extra * passes * element_size(shape.dtype),
                               shape.kernels == KernelFusion::eager ? extra : 0.0);
  if (shape.kernels == KernelFusion::eager) sum.kernels = static_cast<std::int32_t>(projections - 1);
  steps.push_back(std::move(sum));
}

void add_attention_core_backward(StepSequence& steps, const LayerShape& shape, const LayerDims& d) {
  if (shape.context > 1) return detail::add_context_attention_backward(steps, shape, d);
  if (shape.attention == AttentionKernel::fused) return detail::add_fused_attention_backward(steps, shape, d);
  const auto& m = shape.model;
  const std::int64_t batch = shape.micro_batch * d.local_heads;
  const std::int64_t s = m.seq_len;
  const std::int64_t dh = m.qk_head_dim(); // MLA: nope + rope for Q and K, v_head_dim for V
  const std::int64_t dv = m.v_head_dim();
  // Context = P . V: dP = dC . V^T and dV = P^T . dC, each 2 b s^2 h / t FLOPs.
  steps.push_back(detail::masked(
      detail::batched_gemm("attn.context.dgrad_probs", Pass::backward, shape.dtype, {s, s, dv, batch}), d));
  steps.push_back(detail::masked(
      detail::batched_gemm("attn.context.dgrad_values", Pass::backward, shape.dtype, {s, dv, s, batch}), d));
  steps.push_back(memory_bound("attn.dropout.bwd", OpKind::elementwise, Pass::backward, shape.dtype, d.attention_scores,
                               kernel_bytes::dropout_backward(shape.dtype), kernel_flops::dropout));
  steps.push_back(memory_bound("attn.softmax.bwd", OpKind::softmax, Pass::backward, shape.dtype, d.attention_scores,
                               kernel_bytes::softmax_backward(shape.dtype), kernel_flops::softmax_backward));
  // Scores = Q . K^T: dQ = dS . K and dK = dS^T . Q.
  steps.push_back(detail::masked(
      detail::batched_gemm("attn.scores.dgrad_query", Pass::backward, shape.dtype, {s, dh, s, batch}), d));
  steps.push_back(
      detail::masked(detail::batched_gemm("attn.scores.dgrad_key", Pass::backward, shape.dtype, {s, dh, s, batch}), d));
}

ComputeOp residual_backward(const LayerShape& shape, const LayerDims& d, const char* name) {
  return memory_bound(name, OpKind::elementwise, Pass::backward, shape.dtype, d.norm_elements,
                      kernel_bytes::dropout_backward(shape.dtype), kernel_flops::dropout);
}

} // namespace

void detail::add_dense_ffn_fc2_backward(StepSequence& steps, const LayerShape& shape) {
  const LayerDims d = detail::dims_of(shape);
  add_row_parallel_backward(steps, shape, d, "mlp.fc2", d.ffn_out_local, shape.model.hidden);
}

void detail::add_dense_ffn_fc1_backward(StepSequence& steps, const LayerShape& shape) {
  const auto& m = shape.model;
  const LayerDims d = detail::dims_of(shape);
  const double ffn_elements = as_double(d.tokens) * as_double(d.ffn_out_local);
  steps.push_back(detail::ffn_activation_backward("mlp", m.ffn_kind, shape.kernels, shape.dtype, ffn_elements));
  const auto source = shape.shared_experts ? detail::Fp8Source::standalone : detail::Fp8Source::norm;
  add_column_parallel_backward(steps, shape, d, "mlp.fc1", m.hidden, d.ffn_in_local, d.ffn_in_local, -1,
                               detail::fp8_transpose_for_wgrad(shape, "mlp.fc1",
                                                               as_double(d.tokens) * as_double(m.hidden), source,
                                                               detail::gathers_fp8(shape)));
  add_projection_grad_sum(steps, shape, d, "mlp.fc1", m.hidden, m.ffn_kind == FfnKind::swiglu ? 2 : 1);
}

void detail::add_dense_ffn_backward(StepSequence& steps, const LayerShape& shape) {
  add_dense_ffn_fc2_backward(steps, shape);
  add_dense_ffn_fc1_backward(steps, shape);
}

StepSequence transformer_layer_backward(const LayerShape& shape) {
  const auto& m = shape.model;
  const LayerDims d = detail::dims_of(shape);
  StepSequence steps;
  steps.push_back(residual_backward(shape, d, "mlp.residual.bwd"));
  if (m.post_norms) steps.push_back(detail::norm_backward(shape, d, "mlp.post_norm.bwd"));
  if (shape.moe_ffn && m.moe)
    detail::add_moe_backward(steps, shape);
  else
    detail::add_dense_ffn_backward(steps, shape);
  steps.push_back(detail::norm_backward(shape, d, "mlp.norm.bwd"));
  steps.push_back(residual_backward(shape, d, "attn.residual.bwd"));
  if (m.post_norms) steps.push_back(detail::norm_backward(shape, d, "attn.post_norm.bwd"));
  add_row_parallel_backward(steps, shape, d, "attn.out", d.attention_local, m.hidden);
  add_attention_core_backward(steps, shape, d);
  if (m.mla) {
    detail::add_mla_projections_backward(steps, shape, d);
    steps.push_back(detail::norm_backward(shape, d, "attn.norm.bwd"));
    detail::capture_backward(steps);
    return steps;
  }
  if (auto repeat = detail::eager_repeat_kv(shape, d, Pass::backward)) {
    repeat->name += ".bwd";
    steps.push_back(*repeat);
  }
  if (m.position == PositionKind::rope)
    steps.push_back(memory_bound("attn.rope.bwd", OpKind::elementwise, Pass::backward, shape.dtype, d.rope_elements,
                                 detail::rope_bytes(shape.kernels, shape.dtype), kernel_flops::rope));
  detail::add_qk_norms(steps, shape, d, Pass::backward);
  add_column_parallel_backward(steps, shape, d, "attn.qkv", m.hidden, d.qkv_local, d.qkv_local, -1,
                               detail::fp8_transpose_for_wgrad(shape, "attn.qkv",
                                                               as_double(d.tokens) * as_double(m.hidden),
                                                               detail::Fp8Source::norm, detail::gathers_fp8(shape)));
  add_projection_grad_sum(steps, shape, d, "attn.qkv", m.hidden, 3);
  steps.push_back(detail::norm_backward(shape, d, "attn.norm.bwd"));
  detail::capture_backward(steps);
  return steps;
}

} // namespace twocs::model
