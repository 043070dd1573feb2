// The kernels and collectives one tensor-parallel rank runs for one micro-batch: a Megatron-LM
// GPT layer (Shoeybi et al. 2019, Fig. 3: column-parallel QKV and fc1, row-parallel attention
// output and fc2), the vocabulary-parallel embedding and output head, and the optimizer step.
// Shapes and FLOPs per operator are documented in docs/model-reference.md.
#pragma once

#include <cstdint>
#include <utility>

#include <twocs/model/operator.hpp>
#include <twocs/model/training_plan.hpp>
#include <twocs/model/transformer.hpp>

namespace twocs::model {

/// What one device computes for one micro-batch.
struct LayerShape {
  TransformerConfig model;
  std::int64_t micro_batch = 1;   // b, sequences
  std::int64_t tensor = 1;        // t
  bool sequence_parallel = false; // norms and dropouts on s/t tokens; reduce-scatter + all-gather
  Dtype dtype = Dtype::bf16;
  bool tp_async_backward = true; // overlap the column-parallel input-gradient all-reduce with wgrad
  AttentionKernel attention = AttentionKernel::unfused; // fused: FlashAttention (fused_attention.cpp)
  KernelFusion kernels = KernelFusion::fused;           // eager: PyTorch eager's separate kernels
  LossKernel loss = LossKernel::eager;                  // compiled: the output head's cross entropy compiled
  std::int64_t expert = 1;                              // ep: expert-parallel degree (experts per rank = experts / ep)
  bool moe_ffn = false; // this layer's FFN is the model's mixture of experts (model.moe)
  /// This dense FFN is a MoE layer's shared experts: a column-parallel fc1 without the norm fused
  /// in (Megatron-Core moe_module_specs.py: backend.column_parallel_linear()), so under FP8 its
  /// input is quantized by a kernel of its own.
  bool shared_experts = false;
  bool full_attention = false; // this layer ignores model.sliding_window (model.full_attention_every)
  /// FP8 training as Transformer Engine runs it (training.dtype: fp8; docs/simulation.md, "FP8"):
  /// the linear layers' GEMMs take FP8 inputs at the FP8 peak, everything else (activations,
  /// memory-bound kernels, communication) stays in `dtype`, which is then bf16.
  bool fp8_linear = false;
  TrainingPlan::Fp8Recipe fp8_recipe = TrainingPlan::Fp8Recipe::delayed; // how FP8 tensors are scaled
  std::int64_t context = 1;                     // cp: ranks that split each sequence (s / cp tokens here)
  ContextComm context_comm = ContextComm::ring; // how they exchange keys and values
  ExpertDispatcher expert_dispatcher = ExpertDispatcher::all_to_all; // how tokens reach their experts
  bool shared_expert_overlap = false; // shared experts' fc1 under the dispatch, fc2 under the combine
  bool expert_wgrad_overlap = false;  // routed experts' wgrad under the dispatch's backward all-to-all
  bool sync_free_dispatch = false;    // the host never waits for the token counts (Parallelism)
  bool fused_permute_pad = true;      // DeepEP pads for FP8 in its permutation (Parallelism)
  /// How the sequence-parallel collectives overlap the GEMMs beside them (OverlapPlan::tp_comm);
  /// none without sequence parallelism.
  TpCommOverlap tp_comm = TpCommOverlap::none;
  TpReduceScatter tp_comm_reduce_scatter = TpReduceScatter::pipeline; // transformer_engine's (OverlapPlan)
  /// SMs withheld from the forward GEMM + reduce-scatter pairs (OverlapPlan); none but under
  /// Transformer Engine's userbuffers.
  TpSmMargin tp_comm_sm_margin;
  /// Tensor parallelism as PyTorch's DTensor runs it (framework: fsdp; torchtitan's
  /// parallelize_llama.py): autograd keeps a column-parallel layer's all-gathered input for its
  /// weight gradient, so the backward does not gather it again; under FP8, torchao's
  /// Float8ColwiseParallel and Float8RowwiseParallel cast before they all-gather, so the inputs
  /// (forward) and the output gradients (backward) travel in FP8 (tensor_parallel.hpp).
  bool dtensor_tp = false;
  /// PyTorch-native model code (framework: fsdp; torchtitan's Llama, models/llama/model.py:189 and
  /// :253 at 9dec370): q, k and v, and SwiGLU's gate and up, are Linear modules of their own
  /// sharing one input, so each backward writes one input gradient per module and sums them
  /// (`attn.qkv.dgrad.sum`, `mlp.fc1.dgrad.sum`). The GEMMs are still costed as one.
  bool separate_projections = false;
  /// The device's FP8 GEMMs take the TN layout only (Hopper, Ada), so Transformer Engine writes a
  /// transposed copy of each weight-gradient operand; set from the cost model
  /// (OperatorCostModel::fp8_gemms_any_layout) where the device is known.
  bool fp8_transposes = true;

  /// The model's layer under `plan`: a MoE layer when the model has model.moe.
  [[nodiscard]] static LayerShape of(const TransformerConfig& model, const TrainingPlan& plan);
  /// The same on a device whose FP8 GEMMs take any operand layout (`fp8_any_layout`) or only TN.
  [[nodiscard]] static LayerShape of(const TransformerConfig& model, const TrainingPlan& plan, bool fp8_any_layout);
  /// Layer `index` (0-based over the model): its FFN dense for the first moe.dense_layers layers,
  /// its attention over the whole prefix for the layers model.full_attention_every names.
  [[nodiscard]] LayerShape for_layer(std::int64_t index) const {
    LayerShape s = *this;
    s.moe_ffn = model.is_moe_layer(index);
    s.full_attention = model.window_at(index) == 0;
    return s;
  }
  /// What tells one layer's operator sequence from another's of the same model: its FFN (dense
  /// or MoE) and its attention (windowed or whole). Layers of one kind run the same steps.
  [[nodiscard]] std::pair<bool, bool> kind() const { return {moe_ffn, full_attention}; }
  /// The keys a query may look back over in this layer: model.sliding_window, or 0 (the whole
  /// causal prefix) without one or in a full-attention layer.
  [[nodiscard]] std::int64_t attention_window() const { return full_attention ? 0 : model.sliding_window; }
  /// The dtype of the linear layers' GEMMs (qkv, out, fc1, fc2, the experts): fp8 or `dtype`.
  [[nodiscard]] Dtype linear_dtype() const { return fp8_linear ? Dtype::fp8 : dtype; }
};

/// One transformer layer, forward, in execution order.
[[nodiscard]] StepSequence transformer_layer_forward(const LayerShape& shape);
/// One transformer layer, backward (input and weight gradients), in execution order.
[[nodiscard]] StepSequence transformer_layer_backward(const LayerShape& shape);
/// What activation recomputation re-runs before a layer's backward (Korthikanti et al. 2022):
/// full = the whole forward; selective = `modules` (by default the attention core: scores,
/// softmax, dropout, context); none = nothing. Steps carry Pass::recompute.
[[nodiscard]] StepSequence transformer_layer_recompute(const LayerShape& shape, Recompute mode,
                                                       const RecomputeModules& modules = {});

/// Word and position embedding, forward (first pipeline stage).
[[nodiscard]] StepSequence embedding_forward(const LayerShape& shape);
[[nodiscard]] StepSequence embedding_backward(const LayerShape& shape);
/// Final norm, logits and vocabulary-parallel cross-entropy (last pipeline stage).
[[nodiscard]] StepSequence output_head_forward(const LayerShape& shape);
/// `owns_word_embedding_grad`: the output layer's weight is the word embedding (tied, as in
/// GPT-3 and Megatron-LM); when the embedding lives on the same device its gradient is final
/// only after the embedding's backward, which then reports it.
[[nodiscard]] StepSequence output_head_backward(const LayerShape& shape, bool owns_word_embedding_grad);

/// One multi-token-prediction depth (model.mtp_layers) before its transformer layer: the
/// embedding of the shifted tokens, its norm and the incoming hidden states' norm, their
/// concatenation and the column-parallel projection 2h -> h, gathered over the tensor group.
[[nodiscard]] StepSequence mtp_input_forward(const LayerShape& shape);
/// `reports_embedding_grad`: the embedding's gradient is final here (the last stage's own copy
/// of an untied embedding); otherwise the main embedding's or the tied output layer's backward
/// reports it.
[[nodiscard]] StepSequence mtp_input_backward(const LayerShape& shape, bool reports_embedding_grad);
/// After the depth's transformer layer: its final norm, the shared output layer's logits and
/// the loss. The backward reports only the norm's gradient: the main head's backward, which
/// runs after it, reports the shared output weight's.
[[nodiscard]] StepSequence mtp_head_forward(const LayerShape& shape);
[[nodiscard]] StepSequence mtp_head_backward(const LayerShape& shape);

/// Rows of the word embedding on one tensor-parallel rank: the vocabulary padded to a multiple
/// of 128 * t (Megatron-LM --make-vocab-size-divisible-by 128), divided by t.
[[nodiscard]] std::int64_t local_vocab(std::int64_t vocab, std::int64_t tensor);

/// The optimizer step over `parameters` parameters held by one device: gradient-norm
/// computation for clipping, then the update.
[[nodiscard]] StepSequence optimizer_steps(std::int64_t parameters, OptimizerKind kind, Dtype dtype);
/// An optimizer step whose scalar result the host reads after all-reducing it over the tensor and
/// pipeline groups: the fp16 overflow flag after unscaling, the gradient norm (one fp32 each).
[[nodiscard]] bool reduces_model_parallel_scalar(const ComputeOp& op);

} // namespace twocs::model
