// What one transformer layer saves for its backward pass when nothing is recomputed, per token
// and per unit of hidden width (multiples of s b h bytes), from the layer's shapes: Korthikanti et
// al. 2022 (section 4.1) count 34 s b h for GPT (multi-head attention, a 4h GeLU MLP, dropout):
// two norm inputs 4, the QKV input 2, Q, K and V 6, the attention-output input 2, the fc1 input
// 2, the GeLU input 8 and output (fc2 input) 8, two dropout masks 2. The same tensors for other
// shapes: grouped-query K and V (kv_heads x d_head wide), attention wider than h (Qwen3), SwiGLU
// (fc1 writes gate and up, 2f wide; Megatron-Core's fused bias_swiglu saves that input only and
// recomputes SiLU), no dropout (Llama, Qwen, Mixtral: attention_dropout 0.0), and a routed MoE
// FFN, whose fc1 input, fc1 output and fc2 input exist once per routed copy (top_k per token).
#pragma once

#include <twocs/model/training_plan.hpp>
#include <twocs/model/transformer.hpp>

namespace twocs::model {

/// Bytes per s b h of one layer's saved activations (16-bit), besides the attention core's
/// s x s (or FlashAttention's per-row) terms. Without sequence parallelism `replicated` is held
/// whole by every tensor-parallel rank and `split` is divided by t; with it both are divided by t.
struct ActivationUnits {
  double replicated = 0; // norm inputs, QKV and fc1 inputs, dropout masks
  double split = 0;      // Q, K, V, attention output, fc1 output, fc2 input (and MoE copies)
  /// Of these, the inputs Transformer Engine saves in FP8 for the weight gradients (halved in
  /// FP8 training): QKV and fc1 inputs (replicated), attention-output and fc2 inputs (split).
  double fp8_replicated = 0;
  double fp8_split = 0;
};

/// A layer whose FFN is the model's mixture of experts when `moe_ffn` (model.moe needed), dense
/// (ffn_hidden wide) otherwise: the first moe.dense_layers layers of a mixed model (DeepSeek-V3).
/// `discarded`: the modules selective recomputation re-runs (training.recompute_modules), whose
/// outputs Megatron-Core frees after the forward (output-discarding checkpoints for layernorm,
/// moe_act and mla_up_proj; a checkpointed dense MLP keeps only its input), in FP8 too
/// (set_save_original_input). The attention core's own term is the caller's.
[[nodiscard]] ActivationUnits layer_activation_units(const TransformerConfig& model, bool moe_ffn,
                                                     const RecomputeModules& discarded = no_recompute_modules());
/// The model's layer: MoE with model.moe.
[[nodiscard]] inline ActivationUnits layer_activation_units(const TransformerConfig& model) {
  return layer_activation_units(model, model.moe.has_value());
}

/// Activations of one layer for one micro-batch, in bytes, as `plan` recomputes them (the mean
/// layer of a chunk under training.recompute_layers); `moe_ffn` as layer_activation_units.
[[nodiscard]] double layer_activation_bytes(const TransformerConfig& m, const TrainingPlan& plan,
                                            bool sequence_parallel, bool moe_ffn);

/// Bytes of one layer and micro-batch under torchtitan's per-operator selective checkpointing
/// (recompute: selective-op), `sbh` = local sequence x micro-batch x hidden.
[[nodiscard]] double op_checkpoint_bytes(const TransformerConfig& m, const TrainingPlan& plan, bool sequence_parallel,
                                         double sbh);

} // namespace twocs::model
