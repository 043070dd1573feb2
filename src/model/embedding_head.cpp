// The vocabulary-parallel embedding (first stage), the output head with vocabulary-parallel
// cross-entropy (last stage) and the optimizer step, per tensor-parallel rank (Megatron-LM
// VocabParallelEmbedding and vocab_parallel_cross_entropy; Shoeybi et al. 2019, section 3).
#include <twocs/model/layer_ops.hpp>
#include <twocs/units/numeric.hpp>

#include "layer_dims.hpp"
#include "memory_bound_costs.hpp"
#include "op_builders.hpp"
#include "tensor_parallel.hpp"

namespace twocs::model {
namespace {

using detail::collective;
using detail::memory_bound;

using units::as_double;

/// Bytes per logit of the cross-entropy kernels, which work in fp32 (Megatron-LM casts the
/// logits to float): cast + max reads the logits and writes fp32, subtract-exp-sum reads and
/// writes fp32 in place, backward normalises, subtracts the one-hot target and casts back.
double ce_max_bytes(Dtype d) { return element_size(d) + 8; }
constexpr double ce_exp_sum_bytes = 20;
double ce_backward_bytes(Dtype d) { return 12 + element_size(d); }

/// Bytes per logit of each cross-entropy kernel of the output head. Compiled (training.loss:
/// compiled), the fp32 cast fuses into the reductions: the max and the exponentials' sum each
/// read the 16-bit logits once, and the backward reads them and writes their gradient once (an
/// assumption from Inductor's looped reductions, not measured).
struct CrossEntropyBytes {
  double max, exp_sum, backward;
};
CrossEntropyBytes cross_entropy_bytes(const LayerShape& shape) {
  const double e = element_size(shape.dtype);
  if (shape.loss == LossKernel::compiled) return {e, e, 2 * e};
  return {ce_max_bytes(shape.dtype), ce_exp_sum_bytes, ce_backward_bytes(shape.dtype)};
}

/// A small all-reduce of one fp32 value per token across the tensor-parallel group.
CollectiveOp per_token_all_reduce(const LayerShape& shape, const char* name) {
  return collective(name, Collective::all_reduce, CommGroup::tensor, Pass::forward,
                    size_of(as_double(detail::dims_of(shape).tokens), Dtype::fp32));
}

} // namespace

std::int64_t local_vocab(std::int64_t vocab, std::int64_t tensor) {
  const std::int64_t multiple = 128 * tensor;
  const std::int64_t padded = (vocab + multiple - 1) / multiple * multiple;
  return padded / tensor;
}

StepSequence embedding_forward(const LayerShape& shape) {
  const auto d = detail::dims_of(shape);
  const double bsh = as_double(d.tokens) * as_double(shape.model.hidden);
  StepSequence steps;
  // Each rank gathers the rows of its vocabulary slice (zeros elsewhere), then the slices are summed.
  steps.push_back(memory_bound("embed.lookup", OpKind::embedding, Pass::forward, shape.dtype, bsh,
                               kernel_bytes::embedding_forward(shape.dtype), kernel_flops::embedding));
  if (auto leave = detail::leave_region_forward(shape, d, "embed")) steps.push_back(std::move(*leave));
  // Add the learned position embedding, then dropout.
  steps.push_back(memory_bound("embed.dropout", OpKind::elementwise, Pass::forward, shape.dtype, d.norm_elements,
                               kernel_bytes::bias_dropout_add_forward(shape.dtype), kernel_flops::dropout));
  return steps;
}

StepSequence embedding_backward(const LayerShape& shape) {
  const auto d = detail::dims_of(shape);
  const auto& m = shape.model;
  const double bsh = as_double(d.tokens) * as_double(m.hidden);
  StepSequence steps;
  steps.push_back(memory_bound("embed.dropout.bwd", OpKind::elementwise, Pass::backward, shape.dtype, d.norm_elements,
                               kernel_bytes::dropout_backward(shape.dtype), kernel_flops::dropout));
  if (shape.sequence_parallel)
    steps.push_back(
        collective("embed.all_gather", Collective::all_gather, CommGroup::tensor, Pass::backward, d.activation));
  ComputeOp wgrad = memory_bound("embed.wgrad", OpKind::embedding, Pass::backward, shape.dtype, bsh,
                                 kernel_bytes::embedding_backward(shape.dtype), kernel_flops::embedding);
  // Word embedding slice plus the (replicated) learned position embedding.
  wgrad.grad_params = local_vocab(m.vocab, shape.tensor) * m.hidden;
  if (m.position == PositionKind::learned) wgrad.grad_params += m.seq_len * m.hidden;
  steps.push_back(std::move(wgrad));
  return steps;
}

StepSequence output_head_forward(const LayerShape& shape) {
  const auto d = detail::dims_of(shape);
  const auto& m = shape.model;
  const std::int64_t vocab_local = local_vocab(m.vocab, shape.tensor);
  const double logits = as_double(d.tokens) * as_double(vocab_local);
  StepSequence steps;
  steps.push_back(memory_bound("head.norm", OpKind::normalization, Pass::forward, shape.dtype, d.norm_elements,
                               kernel_bytes::norm_forward(shape.dtype), kernel_flops::norm_forward_of(m.norm)));
  if (shape.sequence_parallel)
    steps.push_back(
        collective("head.logits.all_gather", Collective::all_gather, CommGroup::tensor, Pass::forward, d.activation));
  // Logits: 2 b s h V FLOPs over all ranks (Narayanan et al. SC'21, Eq. 3).
  steps.push_back(detail::linear_forward("head.logits", shape.dtype, d.tokens, m.hidden, vocab_local));
  const CrossEntropyBytes ce = cross_entropy_bytes(shape);
  steps.push_back(
      memory_bound("head.cross_entropy.max", OpKind::softmax, Pass::forward, shape.dtype, logits, ce.max, 1));
  if (shape.tensor > 1) steps.push_back(per_token_all_reduce(shape, "head.cross_entropy.max.all_reduce"));
  steps.push_back(memory_bound("head.cross_entropy.exp_sum", OpKind::softmax, Pass::forward, shape.dtype, logits,
                               ce.exp_sum, kernel_flops::cross_entropy));
  if (shape.tensor > 1) {
    steps.push_back(per_token_all_reduce(shape, "head.cross_entropy.target.all_reduce"));
    steps.push_back(per_token_all_reduce(shape, "head.cross_entropy.sum.all_reduce"));
  }
  return steps;
}

StepSequence output_head_backward(const LayerShape& shape, bool owns_word_embedding_grad) {
  const auto d = detail::dims_of(shape);
  const auto& m = shape.model;
  const std::int64_t vocab_local = local_vocab(m.vocab, shape.tensor);
  const double logits = as_double(d.tokens) * as_double(vocab_local);
  StepSequence steps;
  steps.push_back(memory_bound("head.cross_entropy.bwd", OpKind::softmax, Pass::backward, shape.dtype, logits,
                               cross_entropy_bytes(shape).backward, kernel_flops::cross_entropy));
  // The logits layer is column-parallel: its backward mirrors QKV and fc1. No bias.
  // An untied output layer (LLaMA) always owns its weight gradient.
  const bool owns = owns_word_embedding_grad || !m.tied_embeddings;
  // Megatron-Core's output layer is its own ColumnParallelLinear, not a Transformer Engine
  // module: its GEMMs stay BF16 under FP8 training.
  LayerShape bf16_head = shape;
  bf16_head.fp8_linear = false;
  detail::add_column_parallel_backward(steps, bf16_head, d, "head.logits", m.hidden, vocab_local, 0, owns ? -1 : 0);
  ComputeOp norm = memory_bound("head.norm.bwd", OpKind::normalization, Pass::backward, shape.dtype, d.norm_elements,
                                kernel_bytes::norm_backward(shape.dtype), kernel_flops::norm_backward);
  norm.grad_params = detail::norm_parameters(m);
  steps.push_back(std::move(norm));
  return steps;
}

bool reduces_model_parallel_scalar(const ComputeOp& op) {
  return op.name == "optimizer.unscale" || op.name == "optimizer.grad_norm";
}

StepSequence optimizer_steps(std::int64_t parameters, OptimizerKind kind, Dtype dtype) {
  // The multi-tensor kernels of Megatron-LM's mixed-precision step (megatron/optimizer/optimizer.py,
  // Float16OptimizerWithFloat16Params.step), each one pass over the parameters in HBM.
  const double n = as_double(parameters);
  const double e = element_size(dtype);
  const bool mixed = dtype != Dtype::fp32;
  StepSequence steps;
  if (dtype == Dtype::fp16) {
    // fp16 gradients copied into fp32 main gradients (_copy_model_grads_to_main_grads), then
    // unscaled and checked for inf/NaN (torch._amp_foreach_non_finite_check_and_unscale_). bf16
    // and fp8 accumulate fp32 main gradients directly and use no loss scale (docs/memory-model.md).
    steps.push_back(memory_bound("optimizer.copy_grads", OpKind::optimizer, Pass::optimizer, dtype, n, 2 + 4, 1));
    steps.push_back(memory_bound("optimizer.unscale", OpKind::optimizer, Pass::optimizer, dtype, n, 4 + 4, 2));
  }
  // Global gradient norm for clipping over the fp32 gradients (clip_grad_norm, multi_tensor_l2norm).
  steps.push_back(memory_bound("optimizer.grad_norm", OpKind::optimizer, Pass::optimizer, dtype, n, 4, 2));
  // Adam (Kingma & Ba 2015, Algorithm 1; apex FusedAdam) reads the fp32 weight, gradient, m and v
  // and writes weight, m and v: 28 bytes and ~12 FLOPs per parameter. SGD with momentum reads
  // weight, gradient and momentum and writes weight and momentum: 20 bytes, ~4 FLOPs.
  if (kind == OptimizerKind::adam)
    steps.push_back(memory_bound("optimizer.adam", OpKind::optimizer, Pass::optimizer, dtype, n, 28, 12));
  else
    steps.push_back(memory_bound("optimizer.sgd", OpKind::optimizer, Pass::optimizer, dtype, n, 20, 4));
  // Mixed precision keeps fp32 master weights (Micikevicius et al. ICLR'18, section 3.1) and copies
  // them back into the 16-bit model weights (_copy_main_params_to_model_params).
  if (mixed)
    steps.push_back(memory_bound("optimizer.copy_params", OpKind::optimizer, Pass::optimizer, dtype, n, 4 + e, 1));
  return steps;
}

} // namespace twocs::model
