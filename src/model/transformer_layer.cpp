// One Megatron-LM GPT layer per tensor-parallel rank (Shoeybi et al. 2019, section 3 and
// Fig. 3; Korthikanti et al. 2022, Fig. 5 for sequence parallelism). Pre-LayerNorm block:
//   x -> LN -> QKV (column-parallel) -> attention -> out (row-parallel) -> dropout + residual
//     -> LN -> fc1 (column-parallel) -> GeLU/SwiGLU -> fc2 (row-parallel) -> dropout + residual
// Per-element HBM traffic of the memory-bound kernels is documented in docs/model-reference.md.
#include <twocs/model/layer_ops.hpp>
#include <twocs/units/numeric.hpp>

#include <cassert>

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

using detail::dims_of;
using detail::LayerDims;
using detail::leave_region_forward;
using detail::memory_bound;

using units::as_double;

void add_attention_core_forward(StepSequence& steps, const LayerShape& shape, const LayerDims& d, Pass pass) {
  if (shape.context > 1) return detail::add_context_attention_forward(steps, shape, d, pass);
  if (shape.attention == AttentionKernel::fused) return detail::add_fused_attention_forward(steps, shape, d, pass);
  const auto& m = shape.model;
  const std::int64_t batch = shape.micro_batch * d.local_heads;
  // Scores Q.K^T: [s x d_head] . [d_head x s] per head: 2 b s^2 h / t FLOPs (Narayanan et al. SC'21, Eq. 3).
  steps.push_back(detail::masked(
      detail::batched_gemm("attn.scores", pass, shape.dtype, {m.seq_len, m.seq_len, m.qk_head_dim(), batch}), d));
  steps.push_back(memory_bound("attn.softmax", OpKind::softmax, pass, shape.dtype, d.attention_scores,
                               kernel_bytes::softmax_forward(shape.dtype), kernel_flops::softmax_forward));
  steps.push_back(memory_bound("attn.dropout", OpKind::elementwise, pass, shape.dtype, d.attention_scores,
                               kernel_bytes::dropout_forward(shape.dtype), kernel_flops::dropout));
  // Attention over values: [s x s] . [s x d_head] per head: 2 b s^2 h / t FLOPs.
  steps.push_back(detail::masked(
      detail::batched_gemm("attn.context", pass, shape.dtype, {m.seq_len, m.v_head_dim(), m.seq_len, batch}), d));
}

} // namespace

namespace detail {

void add_dense_ffn_fc1_forward(StepSequence& steps, const LayerShape& shape, Pass pass) {
  const auto& m = shape.model;
  const LayerDims d = dims_of(shape);
  const auto source = shape.shared_experts ? detail::Fp8Source::standalone : detail::Fp8Source::norm;
  detail::add_fp8_quantize(steps, shape, "mlp.fc1", pass, d.norm_elements, source, true, detail::gathers_fp8(shape));
  detail::add_gathered_gemm(steps, shape, d, "mlp.fc1", pass, [&](std::int64_t rows) {
    return detail::linear_forward("mlp.fc1", shape.linear_dtype(), rows, m.hidden, d.ffn_in_local);
  });
  const double ffn_elements = as_double(d.tokens) * as_double(d.ffn_out_local);
  steps.push_back(detail::ffn_activation_forward("mlp", m.ffn_kind, shape.kernels, pass, shape.dtype, ffn_elements));
  detail::add_fp8_quantize(steps, shape, "mlp.fc2", pass, ffn_elements, detail::Fp8Source::standalone);
}

void add_dense_ffn_fc2_forward(StepSequence& steps, const LayerShape& shape, Pass pass) {
  const LayerDims d = dims_of(shape);
  const detail::RowGemm fc2 = [&](std::int64_t rows) {
    return detail::linear_forward("mlp.fc2", shape.linear_dtype(), rows, d.ffn_out_local, shape.model.hidden);
  };
  detail::add_scattered_gemm(steps, shape, d, "mlp.fc2", pass, fc2, shape.tp_comm_sm_margin.fc2_fprop);
}

void add_dense_ffn_forward(StepSequence& steps, const LayerShape& shape, Pass pass) {
  add_dense_ffn_fc1_forward(steps, shape, pass);
  add_dense_ffn_fc2_forward(steps, shape, pass);
}

} // namespace detail

namespace {

/// The FFN under torchtitan's per-operator checkpointing: w3 (SwiGLU's up projection, half of
/// fc1's columns) and the activation run again; without SwiGLU fc1 is saved and fc2 recomputed.
void add_ffn_op_recompute(StepSequence& steps, const LayerShape& shape, const LayerDims& d, Pass pass, bool swiglu) {
  const auto& m = shape.model;
  const auto with_pass = detail::pass_setter(pass);
  if (shape.sequence_parallel) steps.push_back(with_pass(detail::enter_gathered_region(shape, d, "mlp.fc1")));
  if (swiglu)
    steps.push_back(
        with_pass(detail::linear_forward("mlp.fc1", shape.linear_dtype(), d.tokens, m.hidden, d.ffn_in_local / 2)));
  const double ffn_elements = as_double(d.tokens) * as_double(d.ffn_out_local);
  steps.push_back(detail::ffn_activation_forward("mlp", m.ffn_kind, shape.kernels, pass, shape.dtype, ffn_elements));
  if (swiglu) return;
  steps.push_back(
      with_pass(detail::linear_forward("mlp.fc2", shape.linear_dtype(), d.tokens, d.ffn_out_local, m.hidden)));
  if (auto leave = leave_region_forward(shape, d, "mlp.fc2"); leave && !shape.sequence_parallel)
    steps.push_back(with_pass(*leave));
}

/// The fused QKV projection and RoPE (without MLA); under op_recompute only the K projection.
void add_qkv_forward(StepSequence& steps, const LayerShape& shape, const LayerDims& d, Pass pass, bool op_recompute) {
  const auto& m = shape.model;
  // The K projection alone under op_recompute: the QKV columns less Q's, halved (K and V).
  const std::int64_t qkv_columns = op_recompute ? (d.qkv_local - d.attention_local) / 2 : d.qkv_local;
  detail::add_gathered_gemm(steps, shape, d, "attn.qkv", pass, [&](std::int64_t rows) {
    return detail::linear_forward("attn.qkv", shape.linear_dtype(), rows, m.hidden, qkv_columns);
  });
  detail::add_qk_norms(steps, shape, d, pass);
  if (m.position == PositionKind::rope)
    steps.push_back(memory_bound("attn.rope", OpKind::elementwise, pass, shape.dtype, d.rope_elements,
                                 detail::rope_bytes(shape.kernels, shape.dtype), kernel_flops::rope));
  if (auto repeat = detail::eager_repeat_kv(shape, d, pass)) steps.push_back(*repeat);
}

/// `op_recompute`: only what torchtitan's per-operator selective checkpointing re-runs
/// (torchtitan/distributed/activation_checkpoint.py, `_custom_policy` with `_save_list`: the outputs
/// of SDPA, reduce_scatter and every odd-numbered mm of the block are saved, the rest recomputed).
/// torchtitan's Llama block runs its mms in the order wq, wk, wv, wo, w1, w3, w2 (w1, w2 without
/// SwiGLU), so wk, wo and w3 (w2 without SwiGLU) run again with every norm, RoPE, activation and
/// residual; SDPA, wq, wv, w1 and w2 (SwiGLU) do not.
void add_forward(StepSequence& steps, const LayerShape& shape, Pass pass, bool op_recompute = false) {
  const auto& m = shape.model;
  const LayerDims d = dims_of(shape);
  const bool swiglu = m.ffn_kind == FfnKind::swiglu;
  const auto norm = [&](const char* name) { steps.push_back(detail::norm_forward(shape, d, name, pass)); };
  const auto residual = [&](const char* name) {
    steps.push_back(memory_bound(name, OpKind::elementwise, pass, shape.dtype, d.norm_elements,
                                 kernel_bytes::bias_dropout_add_forward(shape.dtype), kernel_flops::dropout));
  };
  const auto with_pass = detail::pass_setter(pass);
  norm("attn.norm");
  if (m.mla) {
    detail::add_mla_projections_forward(steps, shape, d, pass); // op_recompute with MLA is refused
  } else {
    detail::add_fp8_quantize(steps, shape, "attn.qkv", pass, d.norm_elements, detail::Fp8Source::norm, true,
                             detail::gathers_fp8(shape));
    add_qkv_forward(steps, shape, d, pass, op_recompute);
  }
  if (!op_recompute) add_attention_core_forward(steps, shape, d, pass);
  detail::add_fp8_quantize(steps, shape, "attn.out", pass, as_double(d.tokens) * as_double(d.attention_local),
                           detail::Fp8Source::standalone);
  const detail::RowGemm out = [&](std::int64_t rows) {
    return detail::linear_forward("attn.out", shape.linear_dtype(), rows, d.attention_local, m.hidden);
  };
  // A reduce-scatter's output is saved (sequence parallelism); an all-reduce is recomputed.
  if (op_recompute && shape.sequence_parallel)
    steps.push_back(with_pass(out(d.tokens)));
  else
    detail::add_scattered_gemm(steps, shape, d, "attn.out", pass, out, shape.tp_comm_sm_margin.proj_fprop);
  if (m.post_norms) norm("attn.post_norm");
  residual("attn.residual");
  norm("mlp.norm");
  if (shape.moe_ffn && m.moe) {
    if (!op_recompute) detail::add_moe_forward(steps, shape, pass); // op_recompute: experts not modelled
  } else if (op_recompute) {
    add_ffn_op_recompute(steps, shape, d, pass, swiglu);
  } else {
    detail::add_dense_ffn_forward(steps, shape, pass);
  }
  if (m.post_norms) norm("mlp.post_norm");
  residual("mlp.residual");
}

/// Megatron-Core's selective recomputation of `modules` (transformer_layer.py, attention.py,
/// multi_latent_attention.py, moe/experts.py), each re-run before the layer's backward. The
/// attention core's s^2 activations dominate memory but cost few FLOPs (Korthikanti et al. 2022,
/// section 4.2). Transformer Engine's layer spec fuses each norm into the linear after it
/// (TELayerNormColumnParallelLinear), except MLA's input norm and a MoE layer's pre-MLP norm
/// (gpt_layer_specs.py): those are what `layernorm` re-runs. `mlp` re-runs a dense layer's MLP
/// with its fused norm, collectives included (tensor_parallel.checkpoint), and skips MoE layers;
/// `moe` re-runs a MoE layer whole, its token exchange included (moe_layer.py,
/// moe_layer_recompute), which covers `moe_act` and `shared_experts`.
void add_selective_recompute(StepSequence& steps, const LayerShape& shape, const RecomputeModules& modules) {
  const auto& m = shape.model;
  const LayerDims d = dims_of(shape);
  const bool moe_layer = shape.moe_ffn && m.moe;
  if (modules.layernorm && m.mla) steps.push_back(detail::norm_forward(shape, d, "attn.norm", Pass::recompute));
  if (modules.mla_up_proj && m.mla) detail::add_mla_up_projections_forward(steps, shape, d, Pass::recompute);
  if (modules.core_attn) add_attention_core_forward(steps, shape, d, Pass::recompute);
  if ((modules.layernorm && moe_layer) || (modules.mlp && !moe_layer))
    steps.push_back(detail::norm_forward(shape, d, "mlp.norm", Pass::recompute));
  if (!moe_layer) {
    if (modules.mlp) detail::add_dense_ffn_forward(steps, shape, Pass::recompute);
  } else if (modules.moe) {
    detail::add_moe_forward(steps, shape, Pass::recompute);
  } else {
    if (modules.moe_act) detail::add_moe_activation_forward(steps, shape, Pass::recompute);
    if (modules.shared_experts) detail::add_shared_experts_forward(steps, shape, Pass::recompute);
  }
}

} // namespace

LayerShape LayerShape::of(const TransformerConfig& model, const TrainingPlan& plan, bool fp8_any_layout) {
  LayerShape shape = of(model, plan);
  shape.fp8_transposes = !fp8_any_layout;
  return shape;
}

LayerShape LayerShape::of(const TransformerConfig& model, const TrainingPlan& plan) {
  LayerShape shape;
  shape.model = model;
  shape.micro_batch = plan.micro_batch;
  shape.tensor = plan.parallelism.tensor;
  shape.sequence_parallel = plan.parallelism.sequence && plan.parallelism.tensor > 1;
  // Transformer Engine's FP8: only the GEMM inputs of its linear layers are FP8; activations,
  // memory-bound kernels and tensor/pipeline messages stay BF16 (docs/simulation.md, "FP8").
  shape.fp8_linear = plan.dtype == Dtype::fp8;
  shape.dtype = shape.fp8_linear ? Dtype::bf16 : plan.dtype;
  shape.fp8_recipe = plan.fp8_recipe;
  // Megatron-DeepSpeed has no asynchronous tensor-parallel backward all-reduce: the BigScience fork
  // (BLOOM) predates it (megatron/mpu/layers.py) and Microsoft's fork disables it by default.
  // DTensor's tensor parallelism (framework fsdp) has none either: a linear layer's dgrad and wgrad
  // run in one autograd node (aten mm's backward; torchao's Float8 matmul, float8_linear.py:61-93
  // at eab345c), and the input gradient's reduce-scatter is the backward of the input's
  // redistribution, which runs after it (docs/simulation.md, "DTensor's tensor parallelism").
  shape.tp_async_backward = plan.overlap.tp_async_backward && plan.framework == Framework::megatron_lm;
  shape.attention = plan.attention;
  shape.kernels = plan.kernels;
  shape.loss = plan.loss;
  shape.expert = plan.parallelism.expert;
  shape.moe_ffn = model.moe.has_value(); // for_layer(i) picks the dense FFN of the first dense_layers
  shape.context = plan.parallelism.context;
  shape.context_comm = plan.parallelism.context_comm;
  shape.expert_dispatcher = plan.parallelism.expert_dispatcher;
  // Megatron-Core's MoE overlaps (--moe-shared-expert-overlap,
  // --overlap-dispatch-backward-with-experts-wgrad); the other frameworks have neither.
  const bool megatron_core = plan.framework == Framework::megatron_lm;
  shape.shared_expert_overlap = plan.overlap.shared_experts && megatron_core;
  shape.expert_wgrad_overlap = plan.overlap.expert_wgrad && megatron_core;
  shape.sync_free_dispatch = plan.parallelism.sync_free_dispatch;
  shape.fused_permute_pad = plan.parallelism.fused_permute_pad;
  // Both overlaps chunk the sequence-parallel collectives (validate_tp_comm.cpp refuses them without).
  shape.tp_comm = shape.sequence_parallel ? plan.overlap.tp_comm : TpCommOverlap::none;
  shape.tp_comm_reduce_scatter = plan.overlap.tp_comm_reduce_scatter;
  // Only Transformer Engine's userbuffers withhold SMs (validate_tp_comm.cpp refuses a margin without).
  if (shape.tp_comm == TpCommOverlap::transformer_engine) shape.tp_comm_sm_margin = plan.overlap.tp_comm_sm_margin;
  shape.dtensor_tp = plan.framework == Framework::fsdp; // torchtitan's TP plan (layer_ops.hpp)
  shape.separate_projections = plan.framework == Framework::fsdp;
  return shape;
}

StepSequence transformer_layer_forward(const LayerShape& shape) {
  assert(shape.tensor >= 1 && shape.model.heads % shape.tensor == 0);
  StepSequence steps;
  add_forward(steps, shape, Pass::forward);
  detail::capture_forward(steps);
  return steps;
}

StepSequence transformer_layer_recompute(const LayerShape& shape, Recompute mode, const RecomputeModules& modules) {
  StepSequence steps;
  if (mode == Recompute::full) {
    add_forward(steps, shape, Pass::recompute);
  } else if (mode == Recompute::selective) {
    add_selective_recompute(steps, shape, modules);
  } else if (mode == Recompute::selective_op) {
    add_forward(steps, shape, Pass::recompute, true);
  }
  detail::capture_forward(steps);
  return steps;
}

} // namespace twocs::model
