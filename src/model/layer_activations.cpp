#include <twocs/model/layer_activations.hpp>

#include <twocs/model/stage_partition.hpp>
#include <twocs/units/numeric.hpp>

namespace twocs::model {
namespace {

using units::as_double;

constexpr double e = 2.0; // 16-bit activations (Korthikanti et al. 2022, Table 2)

/// DTensor's tensor parallelism (framework: fsdp) keeps the QKV and fc1 inputs as gathered, where
/// Megatron-LM keeps its shard under sequence parallelism (docs/simulation.md, "DTensor's tensor
/// parallelism"): (t - 1) / t of each more, in FP8 under FP8 (torchao's Float8Linear saves
/// input_fp8, float8_linear.py at eab345c). A MoE layer's fc1 input is not gathered; MLA's QKV
/// input is its down projections', which no rank gathers.
double dtensor_gathered_inputs(const TransformerConfig& m, const TrainingPlan& plan, bool sequence_parallel,
                               bool moe_ffn, double sbh) {
  if (plan.framework != Framework::fsdp || !sequence_parallel) return 0;
  const double inputs = (m.mla ? 0.0 : 1.0) + (moe_ffn && m.moe.has_value() ? 0.0 : 1.0);
  const double element = plan.dtype == Dtype::fp8 ? 1.0 : 2.0; // fp32 doubles with the rest
  const double t = as_double(plan.parallelism.tensor);
  return inputs * element * sbh * (t - 1.0) / t;
}

/// A FFN of `width` per copy: the fc1 output (SwiGLU's gate and up) and the fc2 input.
double ffn_units(const TransformerConfig& m, double width, double copies) {
  const bool swiglu = m.ffn_kind == FfnKind::swiglu;
  return copies * e * (width * (swiglu ? 2.0 : 1.0) + width) / as_double(m.hidden);
}

/// Attention: the norm's input, the QKV input (the norm's output), Q, K, V, the attention output.
void add_attention_units(ActivationUnits& u, const TransformerConfig& m, const RecomputeModules& discarded) {
  const double h = as_double(m.hidden);
  const double q = e * as_double(m.attention_width()) / h;
  u.replicated += e + e;
  if (!m.mla) {
    const double k = e * as_double(m.kv_heads * m.head_dim()) / h;
    u.split += q + 2 * k + q;
    // QK-norm saves its inputs, Q and K before the norms (TE's RMSNorm keeps its input for backward).
    if (m.qk_norm) u.split += q + k;
    return;
  }
  // MLA (Megatron-Core MLASelfAttention): the latents, before and after their RMSNorms, are
  // gathered whole on every rank for the up-projections (q_lora, and kv_lora plus the shared
  // RoPE key part); every head gets Q and K of nope + rope and V of v_head_dim.
  const double qk = e * as_double(m.heads * m.qk_head_dim()) / h;
  const double v = e * as_double(m.heads * m.v_head_dim()) / h;
  const auto& a = *m.mla;
  u.replicated += 2 * e * as_double(a.q_lora_rank + a.kv_lora_rank + a.qk_rope_head_dim) / h;
  u.split += qk + qk + v + q;
  if (discarded.mla_up_proj) u.split -= qk + qk + v;
  if (discarded.layernorm) {
    u.replicated -= e; // the input norm's output, the down projections' input
    u.fp8_replicated -= e / 2;
  }
}

/// A routed MoE FFN. Megatron-Core's dispatcher hands each expert its tokens' copies (top_k per
/// token; the busiest rank load_imbalance times the mean), sequence-split over the tensor group
/// (expert-tensor parallelism 1 needs sequence parallelism); shared experts see every token once.
void add_moe_units(ActivationUnits& u, const TransformerConfig& m, const RecomputeModules& discarded) {
  const double h = as_double(m.hidden);
  const double copies = as_double(m.moe->top_k) * m.moe->load_imbalance;
  const double expert_ffn = as_double(m.moe->expert_ffn_hidden);
  // Non-gated experts weight the activation's output by the probabilities unfused, and the
  // product saves that output for backward beside fc1's output and fc2's input (experts.py,
  // bias_act_func; moe_expert_activation.cpp).
  const double weighted = !is_gated(m.ffn_kind) ? copies * e * expert_ffn / h : 0;
  const double routed = copies * e + ffn_units(m, expert_ffn, copies) + weighted;
  const double shared = m.moe->shared_experts > 0 ? ffn_units(m, as_double(m.moe->shared_experts) * expert_ffn, 1) : 0;
  const double routed_fp8 = copies * (e + e * expert_ffn / h) / 2; // fc1 and fc2 inputs per copy, halved
  u.split += routed + shared;
  u.fp8_replicated += e / 2;
  u.fp8_split += routed_fp8;
  if (discarded.layernorm) u.replicated -= e; // the pre-MLP norm's output, the router's input
  if (discarded.moe) {                        // the layer's checkpoint keeps its input (the norm's output) only
    u.split -= routed + shared;
    u.fp8_split -= routed_fp8;
    return;
  }
  if (discarded.moe_act) { // fc2's input per routed copy, and the weighted activation's input
    u.split -= copies * e * expert_ffn / h + weighted;
    u.fp8_split -= copies * e * expert_ffn / h / 2;
  }
  if (discarded.shared_experts) u.split -= shared;
}

/// A dense FFN ffn_hidden wide.
void add_dense_ffn_units(ActivationUnits& u, const TransformerConfig& m, const RecomputeModules& discarded) {
  const double ffn = ffn_units(m, as_double(m.ffn_hidden), 1);
  const double fc2_fp8 = e * as_double(m.ffn_hidden) / as_double(m.hidden) / 2; // fc2's input, halved
  u.split += ffn;
  u.fp8_replicated += e;
  u.fp8_split += fc2_fp8;
  if (discarded.mlp) { // the checkpoint keeps the MLP's input (the norm's input) only
    u.replicated -= e;
    u.split -= ffn;
    u.fp8_replicated -= e / 2;
    u.fp8_split -= fc2_fp8;
  }
}

} // namespace

ActivationUnits layer_activation_units(const TransformerConfig& m, bool moe_ffn, const RecomputeModules& discarded) {
  ActivationUnits u;
  // FP8 halves the QKV and fc1 inputs and the attention-output and fc2 inputs (per routed copy):
  // the attention output here, QKV with the FFN's (fp8_replicated's first e / 2).
  u.fp8_split = e * as_double(m.attention_width()) / as_double(m.hidden) / 2;
  add_attention_units(u, m, discarded);
  // MLP: the norm's input and the fc1 input; per routed copy the fc1 input, output and fc2 input.
  u.replicated += e + e;
  if (moe_ffn && m.moe.has_value()) {
    add_moe_units(u, m, discarded);
  } else {
    add_dense_ffn_units(u, m, discarded);
  }
  // Sandwich norms keep their inputs, the attention's and the FFN's outputs (Gemma 2 and 3).
  if (m.post_norms) u.replicated += e + e;
  // One-byte dropout masks after the attention output and after fc2 (Megatron-LM's 0.1 default).
  if (m.dropout) u.replicated += 2.0;
  return u;
}

/// Activations of one layer for one micro-batch under torchtitan's per-operator selective
/// checkpointing (torchtitan/distributed/activation_checkpoint.py, `_save_list` and
/// `_custom_policy`): the checkpoint keeps the block's input and the outputs of SDPA (its output
/// and fp32 logsumexp), of every reduce_scatter and of every odd-numbered mm in the block's order
/// wq, wk, wv, wo, w1, w3, w2: wq (s b h), wv (s b g d_head), w1 (s b f) and, with SwiGLU, w2
/// (s b h, the row-parallel partial sum). 16-bit elements, doubled for fp32; FP8 not modelled.
/// Eager PyTorch caches every MUST_SAVE output whether or not a backward formula reads it
/// (torch/utils/checkpoint.py, _CachingTorchDispatchMode); a compiled block keeps only what its
/// backward graph reads (AOTAutograd's min-cut partitioner, torch/_functorch/partitioners.py), so
/// not w2's output nor the reduce_scatter after it, which feed only the residual add.
double op_checkpoint_bytes(const TransformerConfig& m, const TrainingPlan& plan, bool sequence_parallel, double sbh) {
  const double t = as_double(plan.parallelism.tensor);
  const double h = as_double(m.hidden);
  const double element = plan.dtype == Dtype::fp32 ? 4.0 : 2.0;
  const double kv_local = as_double(m.kv_heads_per_rank(plan.parallelism.tensor));
  const double input = sequence_parallel ? element * sbh / t : element * sbh;
  const double sb = sbh / h;
  const double q = element * sb * as_double(m.attention_width()) / t;
  const double v = element * sbh * kv_local * as_double(m.head_dim()) / h;
  const double sdpa = q + 4.0 * sb * as_double(m.heads) / t; // output + fp32 logsumexp per row
  const double w1 = element * sbh * as_double(m.ffn_hidden) / (h * t);
  const bool eager = plan.kernels == KernelFusion::eager;
  const double w2 = eager && m.ffn_kind == FfnKind::swiglu ? element * sbh : 0.0;
  const double scatters = eager ? 2.0 : 1.0; // after wo (the backward rebuilds h from it) and w2
  const double reduce_scatters = sequence_parallel ? scatters * element * sbh / t : 0.0;
  return input + q + v + sdpa + w1 + w2 + reduce_scatters;
}

/// Activations of one layer for one micro-batch, in bytes, with 16-bit activations and 1-byte
/// dropout masks (Korthikanti et al. 2022, Table 2). Fused attention stores no s x s softmax
/// output, mask or dropout output (the 5as/h term), only fp32 softmax statistics per row:
/// 4a/h per sbh (Dao et al. 2022, section 3.1: memory linear in sequence length).
double layer_activation_bytes(const TransformerConfig& m, const TrainingPlan& plan, bool sequence_parallel,
                              bool moe_ffn) {
  // training.recompute_layers: a chunk's first N layers keep only their input, the rest all.
  if (recomputes_in_blocks(plan)) {
    const double share = recomputed_share(m, plan);
    TrainingPlan every = plan;
    every.recompute_layers = 0;
    TrainingPlan kept = plan;
    kept.recompute = Recompute::none;
    return share * layer_activation_bytes(m, every, sequence_parallel, moe_ffn) +
           (1.0 - share) * layer_activation_bytes(m, kept, sequence_parallel, moe_ffn);
  }
  const double t = as_double(plan.parallelism.tensor);
  // Context parallelism keeps s / cp tokens per rank (Megatron-Core: activations / cp).
  const double sbh =
      as_double(m.seq_len / plan.parallelism.context) * as_double(plan.micro_batch) * as_double(m.hidden);
  const double attention = plan.attention == AttentionKernel::fused
                               ? 4.0 * as_double(m.heads) / as_double(m.hidden)
                               : (m.dropout ? 5.0 : 2.0) * as_double(m.heads) * as_double(m.seq_len) /
                                     as_double(m.hidden); // without dropout: the softmax output only
  // Korthikanti's 34 (10 replicated + 24 split over t) for GPT, from the shapes otherwise.
  const bool selective = plan.recompute == Recompute::selective;
  const ActivationUnits u =
      layer_activation_units(m, moe_ffn, selective ? plan.recompute_modules : no_recompute_modules());
  const auto held = [&](double replicated, double split) {
    return sequence_parallel ? sbh * (replicated + split) / t : sbh * (replicated + split / t);
  };
  double bytes = 0;
  switch (plan.recompute) {
  case Recompute::none: bytes = held(u.replicated, u.split + attention); break;
  case Recompute::selective:
    bytes = held(u.replicated, u.split + (plan.recompute_modules.core_attn ? 0.0 : attention));
    break;
  case Recompute::full: bytes = sequence_parallel ? 2 * sbh / t : 2 * sbh; break;
  case Recompute::selective_op: return op_checkpoint_bytes(m, plan, sequence_parallel, sbh);
  }
  // Table 2 assumes 2-byte activations; fp32 doubles them. FP8 (Transformer Engine) keeps the
  // activations in BF16 except the inputs its linear layers save for the weight gradients,
  // which it saves in FP8: the QKV and fc1 inputs and the attention-output and fc2 inputs halve
  // (GPT: 7 s b h of the 34).
  if (plan.dtype == Dtype::fp8 && plan.recompute != Recompute::full) bytes -= held(u.fp8_replicated, u.fp8_split);
  if (plan.recompute != Recompute::full) bytes += dtensor_gathered_inputs(m, plan, sequence_parallel, moe_ffn, sbh);
  return plan.dtype == Dtype::fp32 ? 2 * bytes : bytes;
}

} // namespace twocs::model
