// Device memory per pipeline stage (docs/memory-model.md).
#include <twocs/model/memory.hpp>

#include <algorithm>
#include <cassert>

#include <twocs/model/fp8_weights.hpp>
#include <twocs/model/layer_activations.hpp>
#include <twocs/model/layer_ops.hpp>
#include <twocs/model/parameters.hpp>
#include <twocs/model/stage_partition.hpp>
#include <twocs/model/weight_grad_memory.hpp>
#include <twocs/units/numeric.hpp>

#include "fsdp_memory.hpp"

namespace twocs::model {
namespace {

using units::as_double;

struct StageContents {
  std::int64_t layers = 0;
  std::int64_t dense_layers = 0;     // of `layers`, the dense-FFN ones of a mixed model (moe.dense_layers)
  std::int64_t layer_parameters = 0; // of `parameters`, the transformer layers'
  std::int64_t parameters = 0;
  std::int64_t expert_parameters = 0; // of `parameters`, the routed experts' weights
  std::int64_t linear_parameters = 0; // of `layer_parameters`, the linear layers' (experts included)
  bool has_embedding = false;
  bool has_output_head = false;
  std::int64_t mtp_layers = 0; // multi-token-prediction depths (the last stage's)
};

/// `mirror`: the stage of the second chunk a dualpipe rank holds (p - 1 - stage), or -1.
StageContents contents_of(std::int64_t stage, std::int64_t mirror, const std::vector<ModelChunk>& chunks,
                          const ParameterCounts& counts, const TransformerConfig& model, std::int64_t tensor) {
  StageContents c;
  for (const auto& chunk : chunks) {
    if (chunk.stage != stage && chunk.chunk != mirror) continue;
    c.layers += chunk.layers;
    c.dense_layers += std::clamp<std::int64_t>(counts.dense_layers - chunk.first_layer, 0, chunk.layers);
    c.layer_parameters += counts.layer_range(chunk.first_layer, chunk.layers);
    c.expert_parameters += counts.expert_range(chunk.first_layer, chunk.layers);
    c.linear_parameters +=
        counts.linear_range(chunk.first_layer, chunk.layers) + counts.linear_range(model.layers, chunk.mtp_layers);
    c.has_embedding = c.has_embedding || chunk.has_embedding;
    c.has_output_head = c.has_output_head || chunk.has_output_head;
    c.mtp_layers += chunk.mtp_layers;
    c.layer_parameters += counts.mtp_range(model.layers, chunk.mtp_layers);
    c.expert_parameters += counts.expert_range(model.layers, chunk.mtp_layers);
  }
  c.parameters = c.layer_parameters;
  if (c.has_embedding) c.parameters += counts.embedding;
  if (c.mtp_layers > 0 && model.mtp_keeps_embedding_copy(c.has_embedding)) c.parameters += counts.embedding;
  if (c.has_output_head) {
    c.parameters += counts.final_norm;
    // A last stage without the embedding keeps its own copy of the tied word embedding.
    if (!model.tied_embeddings)
      c.parameters += counts.output;
    else if (!c.has_embedding)
      c.parameters += local_vocab(model.vocab, tensor) * model.hidden;
  }
  return c;
}

/// Bytes per parameter of weights, gradients and optimizer state (Rajbhandari et al. SC'20,
/// section 3.1: mixed-precision Adam keeps 2 + 2 + 12 = 16 bytes per parameter). bf16 and fp8
/// training accumulate and reduce gradients in fp32 "main gradients" (Megatron-LM forces
/// accumulate_allreduce_grads_in_fp32 for bf16, megatron/training/arguments.py; DeepSpeed's
/// BF16_Optimizer accumulates in fp32 too): 2 + 4 + 12 = 18 bytes. fp16 keeps 16-bit gradients.
/// Megatron-Core's gradient buffer has the reduction's dtype; FSDP2, DeepSpeed keep fp32 (docs/memory-model.md).
struct BytesPerParameter {
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
};

BytesPerParameter bytes_per_parameter(const TrainingPlan& plan) {
  const bool mixed = plan.dtype != Dtype::fp32;
  const double e = weight_element_size(plan); // fp8 training keeps 16-bit weights too (fp8_weights.hpp)
  const double states = plan.optimizer.kind == OptimizerKind::adam ? 8.0 : 4.0; // fp32 m, v or momentum
  const double fp32_unless_fp16 = plan.dtype == Dtype::fp16 ? 2.0 : 4.0;
  const double gradients =
      plan.framework == Framework::megatron_lm ? plan.grad_reduce_element_size() : fp32_unless_fp16;
  return {e, gradients, states + (mixed ? 4.0 : 0.0)}; // + fp32 master weights
}

/// Pipeline stages p, chunks per stage v, micro-batches m, and the merged steps' extra warm-up
/// forward (overlap.expert_comm).
struct ScheduleCounts {
  std::int64_t p, v, m, extra;
};
ScheduleCounts schedule_counts(const TrainingPlan& plan) {
  return {plan.parallelism.pipeline, plan.parallelism.virtual_stages, plan.micro_batches(),
          plan.overlap.expert_comm ? 1 : 0};
}

/// Micro-batch chunks whose activations a stage holds at its peak: all m for GPipe, p - i for
/// 1F1B (Narayanan et al. SC'21, section 2.2), and for the interleaved schedule Megatron-LM's
/// warm-up count 2 (p - i - 1) + (v - 1) p plus the one in steady state, in chunks. Merged
/// forward-backward steps (overlap.expert_comm) warm up one more (schedules.py,
/// get_pp_rank_microbatches: "we schedule one extra micro-batch forward step"). ZB-H1 holds 1F1B's
/// whole sets (Qi et al., ICLR 2024, section 2.1; its deferred W passes: zero_bubble_peak);
/// DualPipe p + 1 chunks on every rank (deepseek-ai/DualPipe, README: "Activation Per Device").
std::int64_t chunks_in_flight(const TrainingPlan& plan, std::int64_t stage) {
  const auto [p, v, m, extra] = schedule_counts(plan);
  switch (plan.pipeline_schedule) {
  case PipelineSchedule::gpipe: return m * v;
  case PipelineSchedule::one_f_one_b:
  case PipelineSchedule::zb_h1: return std::min(p - stage + extra, m) * v;
  case PipelineSchedule::dualpipe: return std::min(p + 1, m);
  case PipelineSchedule::interleaved_one_f_one_b: return std::min(2 * (p - stage - 1) + (v - 1) * p + 1 + extra, m * v);
  }
  return m * v;
}

/// Micro-batches whose output-layer tensors (logits, the loss's saved tensors) the last stage holds
/// at its peak of `in_flight` chunks: the last model chunk's share. GPipe runs every forward
/// first (m); 1F1B and ZB-H1 hold in_flight / v = 1 (+1 merged) on the last stage; the interleaved
/// schedule's warm-up on the last stage fills chunks 0 .. v - 2 with p micro-batches each before
/// the last chunk's first forward, which its backward follows (Megatron-LM schedules.py,
/// forward_backward_pipelining_with_interleaving), so the last chunk holds the rest,
/// in_flight - (v - 1) p; DualPipe (both ends hold an output layer) one per chunk in flight, up to v.
/// A merged step's extra forward (overlap.expert_comm) reaches the head after the backward it runs
/// with has left it, so it adds none.
std::int64_t head_micro_batches_in_flight(const TrainingPlan& plan, std::int64_t in_flight) {
  const auto [p, v, m, extra] = schedule_counts(plan);
  switch (plan.pipeline_schedule) {
  case PipelineSchedule::gpipe: return m;
  case PipelineSchedule::one_f_one_b:
  case PipelineSchedule::zb_h1: return std::max<std::int64_t>(in_flight / v - extra, 1);
  case PipelineSchedule::interleaved_one_f_one_b:
    return std::clamp<std::int64_t>(in_flight - (v - 1) * p - extra, 1, m);
  case PipelineSchedule::dualpipe: return std::min(in_flight, v);
  }
  return std::min(in_flight, v);
}

/// ZB-H1's peak on stage i, in sets of one micro-batch's layers: before the B of micro-batch k
/// the stage holds min(w + k + 1, m) - k whole sets (w = p - i - 1 warm-up forwards) and min(k, i)
/// sets of W operands for the W passes it deferred by i (schedule.hpp; Qi et al., ICLR 2024).
struct ZeroBubblePeak {
  std::int64_t whole = 0, weight_only = 0;
};
ZeroBubblePeak zero_bubble_peak(const TrainingPlan& plan, std::int64_t stage, double whole, double weight_only) {
  const std::int64_t m = plan.micro_batches();
  const std::int64_t warmup = std::min(plan.parallelism.pipeline - stage - 1, m);
  ZeroBubblePeak peak;
  double most = -1;
  for (std::int64_t k = 0; k < m; ++k) {
    const ZeroBubblePeak held{std::min(warmup + k + 1, m) - k, std::min(k, stage)};
    const double bytes = as_double(held.whole) * whole + as_double(held.weight_only) * weight_only;
    if (bytes > most) {
      most = bytes;
      peak = held;
    }
  }
  return peak;
}

/// The K/V buffers of context-parallel attention, at their largest within one layer. Ring:
/// Transformer Engine's forward keeps every received block until the layer's forward returns
/// (cp blocks, the list p2p_comm_buffers of AttnFuncWithCPAndKVP2P) and its backward
/// double-buffers K/V with dK/dV (2 x 2 blocks). All-gather: the backward holds the re-gathered
/// K/V and the full-sequence dK/dV (2 cp blocks; AttnFuncWithCPAndKVAllGather).
double context_kv_buffers(const TransformerConfig& m, const TrainingPlan& plan, double element) {
  const auto& par = plan.parallelism;
  if (par.context <= 1) return 0;
  const double block = m.context_kv_elements(plan.micro_batch, par.tensor, par.context) * element;
  const double cp = as_double(par.context);
  switch (par.context_comm) {
  case ContextComm::ring: return std::max(cp, 4.0) * block;
  case ContextComm::all_gather: return 2.0 * cp * block;
  // All-to-all: the whole sequence's K/V of a / cp heads (one block's size) and its gradients.
  case ContextComm::all_to_all: return 2.0 * block;
  }
  return 0;
}

/// The cross-entropy's fp32 vocabulary tensors of one micro-batch on the last stage: the logits
/// kept for its backward (Korthikanti et al. 2022, section 4.3). PyTorch's unfused loss
/// (framework fsdp, as torchtitan runs it: F.cross_entropy on logits cast to fp32) holds three at
/// the start of backward: log_softmax's saved output, nll_loss's gradient and
/// log_softmax_backward's result (torchtitan train.py frees the fp32 logits first, `del pred`).
/// Compiled (training.loss: compiled), AOTAutograd saves the 16-bit logits and the backward
/// writes their 16-bit gradient from them in one kernel: two logits-sized tensors of e bytes.
double loss_bytes(const TransformerConfig& m, const TrainingPlan& plan, std::int64_t local_seq) {
  const double logits = as_double(local_seq * plan.micro_batch * local_vocab(m.vocab, plan.parallelism.tensor));
  if (plan.framework != Framework::fsdp) return 4.0 * logits;
  if (plan.loss == LossKernel::compiled) return 2.0 * (plan.dtype == Dtype::fp32 ? 4.0 : 2.0) * logits;
  return 3.0 * 4.0 * logits;
}

/// What torchtitan's final norm and output projection save for backward under framework fsdp,
/// held with the loss at the start of backward. They run eager in compiled runs too (torchtitan
/// parallelize_llama.py, apply_compile: each TransformerBlock only). RMSNorm (models/norms.py:
/// x.float(), x * rsqrt(x.pow(2).mean() + eps), type_as, * weight) saves the fp32 input (pow and
/// mul, tools/autograd/derivatives.yaml) and the normalised x (the mul by weight); LayerNorm
/// (native_layer_norm) saves its input. The output linear saves its input. Sequence parallelism
/// splits the norm's tokens over t; the linear's input is gathered.
double head_saved_bytes(const TransformerConfig& m, const TrainingPlan& plan, std::int64_t local_seq, bool sp) {
  if (plan.framework != Framework::fsdp) return 0;
  const double e = plan.dtype == Dtype::fp32 ? 4.0 : 2.0;
  const double sbh = as_double(local_seq * plan.micro_batch) * as_double(m.hidden);
  const double norm = m.norm == NormKind::rmsnorm ? 4.0 + e : e;
  return norm * sbh / (sp ? as_double(plan.parallelism.tensor) : 1.0) + e * sbh;
}

} // namespace

units::Bytes MemoryReport::peak() const {
  units::Bytes peak{};
  for (const auto& s : stages) peak = units::max(peak, s.breakdown.total());
  return peak;
}

std::int64_t MemoryReport::peak_stage() const {
  std::int64_t best = 0;
  for (const auto& s : stages)
    if (s.breakdown.total() > stages[static_cast<std::size_t>(best)].breakdown.total()) best = s.stage;
  return best;
}

namespace {

/// What every stage's estimate shares.
struct MemoryInputs {
  const TransformerConfig& model;
  const TrainingPlan& plan;
  ParameterCounts counts;
  BytesPerParameter per_param;
  bool sp = false;
  double moe_activations = 0;   // one layer of the model's kind (MoE with model.moe)
  double dense_activations = 0; // one dense-FFN layer of a mixed model
  double mtp_activations = 0;   // one multi-token-prediction depth (its layer's kind)
  double moe_weight_grad = 0;   // what one layer keeps for a deferred W pass (zb-h1)
  double dense_weight_grad = 0;
};

/// Per layer of stage contents `c`, the mean of a per-kind value (dense layers of a mixed model).
double mean_per_layer(const StageContents& c, double moe_value, double dense_value) {
  if (c.dense_layers == 0) return moe_value;
  return (as_double(c.dense_layers) * dense_value + as_double(c.layers - c.dense_layers) * moe_value) /
         as_double(c.layers);
}

/// Weights, gradients and optimizer state of stage contents `c` under ZeRO's sharding.
void add_state(const MemoryInputs& in, const StageContents& c, MemoryBreakdown& b) {
  const auto& par = in.plan.parallelism;
  const auto sharding = in.plan.optimizer.sharding;
  // Sharded state spans the data-parallel group with its context-parallel ranks (Megatron-Core);
  // that of the routed experts the expert-data-parallel group of t d / ep ranks (Megatron-Core's
  // distributed optimizer shards expert parameters over expert_data_parallel_group; experts are
  // whole on every tensor-parallel rank). `shards(x)` counts parameters per rank.
  const double d = as_double(par.data * par.context);
  const double experts = as_double(c.expert_parameters);
  const double dense = as_double(c.parameters) - experts;
  const double expert_d = d * as_double(par.tensor) / as_double(par.expert);
  const auto held = [&](double dense_count, double expert_count, bool sharded) {
    return sharded ? dense_count / d + expert_count / expert_d : dense_count + expert_count;
  };
  const auto shards = [&](bool sharded) { return held(dense, experts, sharded); };
  // ZeRO: stage 1 shards the optimizer state, stage 2 also the gradients, stage 3 also the weights.
  // The linear layers' weights take their own bytes under FP8 training (fp8_weights.hpp).
  const bool full = sharding == OptimizerSharding::full;
  const double linear = as_double(c.linear_parameters);
  const double linear_held = held(linear - experts, experts, full);
  const double linear_bytes = full ? gathered_linear_weight_bytes(in.plan) : resident_linear_weight_bytes(in.plan);
  b.weights = units::Bytes(shards(full) * in.per_param.weights + linear_held * (linear_bytes - in.per_param.weights));
  b.gradients = units::Bytes(shards(sharding == OptimizerSharding::gradients || sharding == OptimizerSharding::full) *
                             in.per_param.gradients);
  b.optimizer_state = units::Bytes(shards(sharding != OptimizerSharding::none) * in.per_param.optimizer);
}

/// Activations held at the stage's peak with `in_flight` model chunks of micro-batches, and the
/// W operands of `weight_only` micro-batches whose W passes are deferred.
double stage_activations(const MemoryInputs& in, const StageContents& c, std::int64_t in_flight,
                         std::int64_t weight_only) {
  const auto& par = in.plan.parallelism;
  const double layers_per_chunk = as_double(c.layers) / as_double(in.plan.chunks_per_rank());
  // A stage with dense and MoE layers holds their mean per layer (the chunks in flight average it).
  const double layer_activations = mean_per_layer(c, in.moe_activations, in.dense_activations);
  double activations = as_double(in_flight) * layers_per_chunk * layer_activations;
  activations +=
      as_double(weight_only) * as_double(c.layers) * mean_per_layer(c, in.moe_weight_grad, in.dense_weight_grad);
  // Full recomputation rebuilds one layer's activations during its backward; per-operator
  // checkpointing rebuilds what it did not save of one layer (the stage's largest kind).
  if (in.plan.recompute == Recompute::full || in.plan.recompute == Recompute::selective_op) {
    const bool rebuilt_moe = in.model.moe.has_value() && c.dense_layers < c.layers;
    if (in.plan.recompute == Recompute::selective_op)
      activations -= rebuilt_moe ? in.moe_activations : in.dense_activations;
    TrainingPlan none = in.plan;
    none.recompute = Recompute::none;
    activations += layer_activation_bytes(in.model, none, in.sp, rebuilt_moe);
  }
  const std::int64_t local_seq = in.model.seq_len / par.context; // tokens per rank of each sequence
  const double head = loss_bytes(in.model, in.plan, local_seq) + head_saved_bytes(in.model, in.plan, local_seq, in.sp);
  const double heads_in_flight = as_double(head_micro_batches_in_flight(in.plan, in_flight));
  if (c.has_output_head) activations += head * heads_in_flight;
  // Each multi-token-prediction depth holds a layer of the last layer's kind, its loss as the
  // head's, and eh_proj's saved 2h-wide input with the embedding norm's input (3 s b h).
  const double mtp_block = 3.0 * as_double(local_seq * in.plan.micro_batch) * as_double(in.model.hidden) *
                           (in.plan.dtype == Dtype::fp32 ? 4.0 : 2.0) / (in.sp ? as_double(par.tensor) : 1.0);
  activations += as_double(c.mtp_layers) * heads_in_flight * (in.mtp_activations + head + mtp_block);
  return activations;
}

/// A full activation buffer for tensor-parallel collectives, send and receive buffers between
/// stages, a prefetched layer of gathered weights under ZeRO-3, and FSDP2's root.
double stage_buffers(const MemoryInputs& in, const StageContents& c) {
  const auto& par = in.plan.parallelism;
  const double activation_element = in.plan.dtype == Dtype::fp32 ? 4.0 : 2.0;
  const double sbh =
      as_double(in.model.seq_len / par.context) * as_double(in.plan.micro_batch) * as_double(in.model.hidden);
  double buffers = 0;
  if (par.tensor > 1) buffers += sbh * activation_element;
  if (par.pipeline > 1) buffers += 2 * sbh * activation_element;
  if (in.plan.optimizer.sharding == OptimizerSharding::full) {
    // Two layers gathered at once (the running one and the prefetched next), linear weights at
    // their gathered bytes (fp8_weights.hpp).
    const auto gathered = [&](std::int64_t all, std::int64_t replicated) {
      return gathered_weight_bytes(in.plan, all, all - replicated);
    };
    buffers += 2 * std::max(gathered(in.counts.per_layer, in.counts.replicated_per_layer),
                            gathered(in.counts.dense_per_layer, in.counts.replicated_dense_per_layer));
  }
  buffers += context_kv_buffers(in.model, in.plan, activation_element);
  buffers += detail::fsdp_root_unsharded_bytes(in.plan, c.parameters - c.layer_parameters, in.per_param.weights);
  buffers += detail::fsdp2_layer_buffer_bytes(in.plan, in.counts);
  return buffers;
}

} // namespace

MemoryReport estimate_memory(const TransformerConfig& model, const TrainingPlan& plan) {
  const auto& par = plan.parallelism;
  MemoryInputs in{model, plan, count_parameters(model, par.tensor, par.expert), bytes_per_parameter(plan)};
  in.sp = par.sequence && par.tensor > 1;
  // Per layer kind: the model's (MoE with model.moe) and a mixed model's dense-FFN layers.
  const bool moe = model.moe.has_value();
  in.moe_activations = layer_activation_bytes(model, plan, in.sp, moe);
  in.dense_activations = moe ? layer_activation_bytes(model, plan, in.sp, false) : in.moe_activations;
  // Under block recomputation (training.recompute_layers) the depths keep all their activations.
  TrainingPlan mtp_plan = plan;
  if (recomputes_in_blocks(plan)) mtp_plan.recompute = Recompute::none;
  in.mtp_activations = layer_activation_bytes(model, mtp_plan, in.sp, model.is_moe_layer(model.layers));
  const bool zero_bubble = plan.pipeline_schedule == PipelineSchedule::zb_h1;
  if (zero_bubble) {
    const LayerShape shape = LayerShape::of(model, plan);
    LayerShape dense = shape;
    dense.moe_ffn = false;
    in.moe_weight_grad = weight_grad_operand_bytes(shape).value();
    in.dense_weight_grad = weight_grad_operand_bytes(dense).value();
  }
  const auto chunks = partition_layers(model, plan);
  MemoryReport report;
  for (std::int64_t stage = 0; stage < par.pipeline; ++stage) {
    const std::int64_t mirror = plan.pipeline_schedule == PipelineSchedule::dualpipe ? par.pipeline - 1 - stage : -1;
    const StageContents c = contents_of(stage, mirror, chunks, in.counts, model, par.tensor);
    MemoryBreakdown b;
    add_state(in, c, b);
    std::int64_t in_flight = chunks_in_flight(plan, stage);
    std::int64_t weight_only = 0;
    if (zero_bubble) {
      const auto peak = zero_bubble_peak(
          plan, stage, as_double(c.layers) * mean_per_layer(c, in.moe_activations, in.dense_activations),
          as_double(c.layers) * mean_per_layer(c, in.moe_weight_grad, in.dense_weight_grad));
      in_flight = peak.whole;
      weight_only = peak.weight_only;
    }
    b.activations = units::Bytes(stage_activations(in, c, in_flight, weight_only));
    b.communication_buffers = units::Bytes(stage_buffers(in, c));
    report.stages.push_back({stage, c.layers, (in_flight + par.virtual_stages - 1) / par.virtual_stages, b});
  }
  assert(!report.stages.empty());
  return report;
}

} // namespace twocs::model
