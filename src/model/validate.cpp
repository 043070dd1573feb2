#include <twocs/model/validate.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>

#include <fmt/format.h>

#include <twocs/error.hpp>
#include <twocs/model/size_limits.hpp>

#include "validate_cuda_graphs.hpp"
#include "validate_fp8_params.hpp"
#include "validate_moe_overlap.hpp"
#include "validate_sizes.hpp"
#include "validate_split_schedules.hpp"
#include "validate_tp_comm.hpp"

namespace twocs::model {
namespace {

void require_positive(std::int64_t value, const char* key) {
  if (value <= 0)
    throw InputError(fmt::format("{} must be positive, got {}", key, value), key, "give a count of at least 1");
}

std::optional<std::int64_t> checked_product(std::int64_t a, std::int64_t b) {
  std::int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) return std::nullopt;
  return product;
}

/// "4 or 6": the divisors of `n` nearest to `near` from below and above (n, near > 0). The
/// search is bounded so that absurd inputs cannot stall it; 1 and n always divide n.
std::string nearest_divisors(std::int64_t n, std::int64_t near) {
  constexpr std::int64_t max_steps = 1'000'000;
  const std::int64_t start = std::min(near, n);
  std::int64_t below = 1;
  for (std::int64_t d = start; d >= 1 && start - d < max_steps; --d)
    if (n % d == 0) {
      below = d;
      break;
    }
  std::int64_t above = n;
  for (std::int64_t d = near + 1; d < n && d - near < max_steps; ++d)
    if (n % d == 0) {
      above = d;
      break;
    }
  return above <= below || near >= n ? fmt::format("{}", below) : fmt::format("{} or {}", below, above);
}

/// "1536 or 1552": the multiples of `step` nearest to `value` (value, step > 0).
std::string nearest_multiples(std::int64_t value, std::int64_t step) {
  const std::int64_t below = value / step * step;
  const std::int64_t above = below + step;
  return below > 0 ? fmt::format("{} or {}", below, above) : fmt::format("{}", above);
}

void require_divisible(std::int64_t dividend, const char* dividend_key, std::int64_t divisor, const char* divisor_key,
                       const char* blamed_key, const std::string& fix) {
  if (dividend % divisor != 0)
    throw InputError(fmt::format("{} ({}) must be divisible by {} ({})", dividend_key, dividend, divisor_key, divisor),
                     blamed_key, fix);
}

void validate_parallel_counts(const TrainingPlan& plan) {
  const Parallelism& par = plan.parallelism;
  require_positive(plan.global_batch, "training.global_batch");
  require_positive(plan.micro_batch, "training.micro_batch");
  detail::require_at_most(plan.micro_batch, limits::micro_batch, "training.micro_batch");
  detail::require_at_most(plan.global_batch, limits::global_batch, "training.global_batch");
  require_positive(par.tensor, "training.parallelism.tensor");
  require_positive(par.pipeline, "training.parallelism.pipeline");
  require_positive(par.data, "training.parallelism.data");
  require_positive(par.virtual_stages, "training.parallelism.virtual_stages");
  require_positive(par.context, "training.parallelism.context");
  const auto tp = checked_product(par.tensor, par.pipeline);
  const auto tpd = tp ? checked_product(*tp, par.data) : std::nullopt;
  if (!tpd || !checked_product(*tpd, par.context) || !checked_product(par.data, plan.micro_batch) ||
      !checked_product(par.pipeline, par.virtual_stages))
    throw InputError("the parallel degrees are too large: their product overflows", "training.parallelism",
                     "give realistic tensor, pipeline, data and virtual_stages degrees");
  if (plan.world_size() > limits::devices)
    throw InputError(fmt::format("the plan spans {} devices ({}), beyond what twocs simulates (at most {})",
                                 plan.world_size(), describe_degrees(par), limits::devices),
                     "training.parallelism",
                     "lower a parallel degree: the largest clusters built hold about 100,000 devices");
}

/// Context parallelism as Megatron-Core runs it: Transformer Engine's fused attention kernels
/// only, and a sequence that splits into 2 cp equal chunks (the causal load-balancing split).
void validate_context(const TransformerConfig& m, const TrainingPlan& plan) {
  const std::int64_t cp = plan.parallelism.context;
  if (cp == 1) return;
  if (plan.attention != AttentionKernel::fused)
    throw InputError(fmt::format("training.parallelism.context = {} needs fused attention: Transformer Engine runs "
                                 "context parallelism only in its fused attention kernels",
                                 cp),
                     "training.attention", "set training.attention: fused");
  require_divisible(m.seq_len, "model.seq_len", 2 * cp, "2 x training.parallelism.context",
                    "training.parallelism.context",
                    fmt::format("each rank holds 2 of 2 cp equal chunks of the sequence: use a context degree with "
                                "2 cp dividing {}",
                                m.seq_len));
  if (plan.parallelism.context_comm != ContextComm::all_to_all) return;
  // Transformer Engine's all-to-all: "The number of attention heads needs to be divisible by CP
  // size!" (AttnFuncWithCPAndQKVOA2A), for the query heads and the key/value heads of a rank.
  const std::int64_t t = plan.parallelism.tensor;
  const std::int64_t kv_local = m.kv_heads_per_rank(t);
  if ((m.heads / t) % cp != 0 || kv_local % cp != 0)
    throw InputError(fmt::format("context_comm: all_to_all splits each rank's heads over the context group, but "
                                 "its {} query and {} key/value heads do not divide by {}",
                                 m.heads / t, kv_local, cp),
                     "training.parallelism.context_comm",
                     "use a context degree that divides both, or context_comm: ring or all_gather");
}

void validate_sharding(const TransformerConfig& m, const TrainingPlan& plan) {
  const Parallelism& par = plan.parallelism;
  require_divisible(m.heads, "model.heads", par.tensor, "training.parallelism.tensor", "training.parallelism.tensor",
                    fmt::format("tensor parallelism splits whole attention heads: use a tensor degree that "
                                "divides {}, e.g. {}",
                                m.heads, nearest_divisors(m.heads, par.tensor)));
  require_divisible(m.kv_heads, "model.kv_heads", par.tensor, "training.parallelism.tensor",
                    "training.parallelism.tensor",
                    fmt::format("tensor parallelism splits whole key/value heads (grouped-query attention): use a "
                                "tensor degree that divides {}, e.g. {}",
                                m.kv_heads, nearest_divisors(m.kv_heads, par.tensor)));
  if (par.sequence && m.seq_len % par.tensor != 0)
    throw InputError(fmt::format("with training.parallelism.sequence, model.seq_len ({}) must be divisible by "
                                 "training.parallelism.tensor ({})",
                                 m.seq_len, par.tensor),
                     "training.parallelism.sequence",
                     fmt::format("sequence parallelism splits the sequence over the tensor-parallel group: use a "
                                 "tensor degree that divides {} (e.g. {}) or set sequence: false",
                                 m.seq_len, nearest_divisors(m.seq_len, par.tensor)));
}

/// Megatron-Core overlaps the distributed optimizer's gather (arguments.py: "--overlap-param-gather
/// only supported with distributed optimizer"); ZeRO-3 and FSDP gather every layer anyway.
void validate_param_gather(const TrainingPlan& plan) {
  if (!plan.overlap.param_gather) return;
  const auto sharding = plan.optimizer.sharding;
  if (sharding == OptimizerSharding::none || sharding == OptimizerSharding::full)
    throw InputError(fmt::format("training.overlap.param_gather overlaps a sharded optimizer's weight gather, but "
                                 "training.optimizer.sharding is {}",
                                 to_string(sharding)),
                     "training.overlap.param_gather",
                     "use sharding: optimizer (Megatron-LM's distributed optimizer) or gradients, or remove "
                     "param_gather (sharding: full gathers every layer before it runs already)");
  if (plan.framework != Framework::megatron_lm)
    throw InputError(fmt::format("training.overlap.param_gather is Megatron-Core's --overlap-param-gather, but "
                                 "training.framework is {}",
                                 to_string(plan.framework)),
                     "training.overlap.param_gather", "use framework: megatron-lm, or remove param_gather");
}

void validate_batch(const TrainingPlan& plan) {
  const Parallelism& par = plan.parallelism;
  const std::int64_t per_step = par.data * plan.micro_batch;
  if (plan.global_batch % per_step != 0)
    throw InputError(fmt::format("training.global_batch ({}) must be divisible by data x micro_batch ({} x {} = {})",
                                 plan.global_batch, par.data, plan.micro_batch, per_step),
                     "training.global_batch",
                     fmt::format("use global_batch {}, or change data or micro_batch",
                                 nearest_multiples(plan.global_batch, per_step)));
}

void validate_schedule(const TrainingPlan& plan) {
  const Parallelism& par = plan.parallelism;
  const bool interleaved = plan.pipeline_schedule == PipelineSchedule::interleaved_one_f_one_b;
  if (par.virtual_stages > 1 && !interleaved)
    throw InputError(fmt::format("training.pipeline_schedule must be interleaved-1f1b for "
                                 "training.parallelism.virtual_stages = {}, not {}",
                                 par.virtual_stages, to_string(plan.pipeline_schedule)),
                     "training.pipeline_schedule",
                     "set pipeline_schedule: interleaved-1f1b (or leave it out), or virtual_stages: 1");
  // DeepSpeed's TrainSchedule runs one chunk per stage (deepspeed/runtime/pipe/schedule.py).
  if (par.virtual_stages > 1 && plan.framework == Framework::megatron_deepspeed)
    throw InputError("training.framework megatron-deepspeed has no interleaved schedule", "training.framework",
                     "set training.parallelism.virtual_stages: 1, or framework: megatron-lm");
  if (par.virtual_stages > 1 && par.pipeline == 1)
    throw InputError(
        fmt::format("training.parallelism.virtual_stages = {} needs more than one pipeline stage", par.virtual_stages),
        "training.parallelism.virtual_stages",
        "model chunks interleave across pipeline stages: set pipeline > 1 or virtual_stages: 1");
  // Megatron-LM (schedules.py, forward_backward_pipelining_with_interleaving) asserts that the
  // number of micro-batches is a multiple of the pipeline size for the interleaved schedule.
  if (interleaved && par.pipeline > 1 && plan.micro_batches() % par.pipeline != 0)
    throw InputError(fmt::format("the interleaved schedule needs micro-batches per replica (global_batch / (data x "
                                 "micro_batch) = {}) divisible by training.parallelism.pipeline ({})",
                                 plan.micro_batches(), par.pipeline),
                     "training.global_batch",
                     fmt::format("use global_batch {}, or pipeline_schedule: 1f1b",
                                 nearest_multiples(plan.global_batch, par.data * plan.micro_batch * par.pipeline)));
}

void validate_stage_layers(const TransformerConfig& m, const Parallelism& par) {
  const std::int64_t chunks = par.pipeline * par.virtual_stages;
  // The first and the last chunk may hold only the embedding and the output layer (stage_partition.hpp).
  if (m.layers < std::max<std::int64_t>(1, chunks - 2))
    throw InputError(fmt::format("model.layers ({}) is fewer than the pipeline's model chunks (pipeline {} x "
                                 "virtual_stages {} = {}) less the two end chunks: every other chunk needs a layer",
                                 m.layers, par.pipeline, par.virtual_stages, chunks),
                     "training.parallelism.pipeline", "lower pipeline or virtual_stages");
  if (par.stage_layers.empty()) return;
  const char* key = "training.parallelism.stage_layers";
  if (static_cast<std::int64_t>(par.stage_layers.size()) != chunks)
    throw InputError(fmt::format("{} lists {} stages but the pipeline has {} model chunks (pipeline {} x "
                                 "virtual_stages {})",
                                 key, par.stage_layers.size(), chunks, par.pipeline, par.virtual_stages),
                     key, fmt::format("give one layer count per model chunk: {} entries", chunks));
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < par.stage_layers.size(); ++i) {
    const bool end_chunk = i == 0 || i + 1 == par.stage_layers.size();
    if (par.stage_layers[i] < (end_chunk ? 0 : 1))
      throw InputError(
          fmt::format("{}[{}] is {}: every model chunk but the first and the last needs at least one layer", key, i,
                      par.stage_layers[i]),
          key, "give each chunk 1 layer or more (the first and the last may hold 0)");
    if (par.stage_layers[i] > m.layers - sum)
      throw InputError(fmt::format("{} adds up to more than model.layers ({})", key, m.layers), key,
                       "make the layer counts sum to model.layers");
    sum += par.stage_layers[i];
  }
  if (sum != m.layers)
    throw InputError(fmt::format("{} must add up to model.layers ({}), but adds up to {}", key, m.layers, sum), key,
                     "make the layer counts sum to model.layers");
}

/// Keys the contract fixes whose simulation is not built yet: refused, never silently ignored.
void validate_not_yet_simulated(const TransformerConfig& m, const Parallelism& par) {
  if (par.expert != 1 && !m.moe)
    throw InputError(fmt::format("training.parallelism.expert = {} needs a mixture-of-experts model", par.expert),
                     "training.parallelism.expert", "add model.moe or set expert: 1");
  // Expert parallelism is carved out of the tensor x data x context ranks of a stage
  // (Megatron-Core's expert mesh with expert-tensor-parallel size 1).
  const std::int64_t stage_ranks = par.tensor * par.data * par.context;
  if (stage_ranks % par.expert != 0)
    throw InputError(fmt::format("training.parallelism.tensor x data x context ({}) must be divisible by "
                                 "training.parallelism.expert ({})",
                                 stage_ranks, par.expert),
                     "training.parallelism.expert",
                     fmt::format("expert parallelism spans the tensor-, data- and context-parallel ranks of a "
                                 "pipeline stage: use an expert degree that divides {}, e.g. {}",
                                 stage_ranks, nearest_divisors(stage_ranks, par.expert)));
  if (m.moe && m.moe->dense_layers >= m.layers)
    throw InputError(
        fmt::format("model.moe.dense_layers ({}) must be below model.layers ({})", m.moe->dense_layers, m.layers),
        "model.moe.dense_layers", "keep at least one MoE layer, or drop model.moe for a dense model");
  // The all-to-all variant attends the whole sequence locally; the ring and the all-gather cut it.
  if (m.sliding_window > 0 && m.sliding_window < m.seq_len && par.context > 1 &&
      par.context_comm != ContextComm::all_to_all)
    throw InputError("model.sliding_window with context parallelism over a ring or an all-gather is not simulated yet",
                     "training.parallelism.context", "set context: 1, or context_comm: all_to_all");
  if (m.moe && m.moe->experts % par.expert != 0)
    throw InputError(fmt::format("model.moe.experts ({}) must be divisible by training.parallelism.expert ({})",
                                 m.moe->experts, par.expert),
                     "training.parallelism.expert", "use an expert-parallel degree that divides the experts");
  if (m.moe && par.tensor > 1 && !par.sequence)
    throw InputError(
        "model.moe with tensor parallelism needs training.parallelism.sequence: true", "training.parallelism.sequence",
        "set sequence: true (Megatron-Core requires sequence parallelism for MoE with tensor parallelism)");
}

/// Modules the model has none of (Megatron-Core refuses mla_up_proj without MLA,
/// transformer_config.py; moe_act without experts would re-run nothing).
void validate_recompute_modules(const TransformerConfig& m, const TrainingPlan& plan) {
  if (plan.recompute != Recompute::selective) return;
  if (plan.recompute_modules.moe_act && !m.moe)
    throw InputError("training.recompute_modules lists moe_act, but the model has no experts (model.moe)",
                     "training.recompute_modules", "remove moe_act, or give the model a model.moe");
  if (plan.recompute_modules.moe && !m.moe)
    throw InputError("training.recompute_modules lists moe, but the model has no experts (model.moe)",
                     "training.recompute_modules", "remove moe, or give the model a model.moe");
  if (plan.recompute_modules.shared_experts && !(m.moe && m.moe->shared_experts > 0))
    throw InputError(
        "training.recompute_modules lists shared_experts, but the model has none (model.moe.shared_experts)",
        "training.recompute_modules", "remove shared_experts");
  if (plan.recompute_modules.mla_up_proj && !m.mla)
    throw InputError("training.recompute_modules lists mla_up_proj, but the model has no latent attention (model.mla)",
                     "training.recompute_modules", "remove mla_up_proj, or give the model a model.mla");
}

/// training.loss names how PyTorch's cross entropy runs; Megatron-LM and Megatron-DeepSpeed run
/// their own fused vocab-parallel cross entropy (tensor_parallel/cross_entropy.py).
void validate_loss(const TrainingPlan& plan) {
  if (plan.loss == LossKernel::eager || plan.framework == Framework::fsdp) return;
  throw InputError(fmt::format("training.loss: {} is how PyTorch runs the cross entropy under framework fsdp, but "
                               "training.framework is {}, which runs its own fused vocab-parallel cross entropy",
                               to_string(plan.loss), to_string(plan.framework)),
                   "training.loss", "set training.framework: fsdp, or remove loss");
}

} // namespace

void validate(const TransformerConfig& m) {
  require_positive(m.layers, "model.layers");
  require_positive(m.hidden, "model.hidden");
  require_positive(m.heads, "model.heads");
  require_positive(m.kv_heads, "model.kv_heads");
  require_positive(m.ffn_hidden, "model.ffn_hidden");
  require_positive(m.vocab, "model.vocab");
  require_positive(m.seq_len, "model.seq_len");
  if (m.sliding_window < 0)
    throw InputError(fmt::format("model.sliding_window must be positive, got {}", m.sliding_window),
                     "model.sliding_window", "give the window in tokens (Mistral 7B: 4096), or remove the key");
  if (m.sliding_window > 0 && m.attention_mask != AttentionMask::causal)
    throw InputError("model.sliding_window is a causal window, but model.attention_mask is full",
                     "model.sliding_window", "set attention_mask: causal, or remove sliding_window");
  if (m.qk_norm && m.mla)
    throw InputError("model.qk_norm normalises each head's query and key, and latent attention (model.mla) has its own "
                     "latent norms instead",
                     "model.qk_norm", "remove qk_norm: DeepSeek's MLA normalises its latents (model.mla)");
  if (m.full_attention_every > 0 && m.sliding_window == 0)
    throw InputError("model.full_attention_every names the layers without a window, but there is no "
                     "model.sliding_window",
                     "model.full_attention_every", "give model.sliding_window, or remove full_attention_every");
  if (m.full_attention_every == 1)
    throw InputError("model.full_attention_every: 1 makes every layer attend the whole prefix",
                     "model.full_attention_every",
                     "remove sliding_window and full_attention_every, or give every K-th layer (Gemma 3: 6)");
  if (m.mla) {
    require_positive(m.mla->kv_lora_rank, "model.mla.kv_lora_rank");
    require_positive(m.mla->qk_nope_head_dim, "model.mla.qk_nope_head_dim");
    require_positive(m.mla->qk_rope_head_dim, "model.mla.qk_rope_head_dim");
    require_positive(m.mla->v_head_dim, "model.mla.v_head_dim");
  }
  detail::validate_sizes(m);
  if (m.head_dim_override == 0 && !m.mla) // MLA's head dims are its own keys
    require_divisible(m.hidden, "model.hidden", m.heads, "model.heads", "model.heads",
                      fmt::format("every head gets hidden / heads dimensions: use heads that divide {}, e.g. {} "
                                  "(or set model.head_dim)",
                                  m.hidden, nearest_divisors(m.hidden, m.heads)));
  require_divisible(m.heads, "model.heads", m.kv_heads, "model.kv_heads", "model.kv_heads",
                    fmt::format("each key/value head serves a whole group of query heads: use kv_heads that divide "
                                "{}, e.g. {}",
                                m.heads, nearest_divisors(m.heads, m.kv_heads)));
}

void validate(const TransformerConfig& m, const TrainingPlan& plan) {
  validate(m);
  validate_parallel_counts(plan);
  validate_not_yet_simulated(m, plan.parallelism);
  if (m.mla && plan.recompute == Recompute::selective_op)
    throw InputError("model.mla with torchtitan's per-operator recomputation is not simulated yet",
                     "training.recompute", "use recompute: selective or full");
  validate_recompute_modules(m, plan);
  detail::validate_moe_overlaps(m, plan);
  detail::validate_cuda_graphs(m, plan);
  validate_context(m, plan);
  validate_sharding(m, plan);
  validate_param_gather(plan);
  detail::validate_tp_comm(plan);
  detail::validate_fp8_params(plan);
  validate_loss(plan);
  validate_batch(plan);
  validate_schedule(plan);
  detail::validate_split_schedules(plan);
  validate_stage_layers(m, plan.parallelism);
}

} // namespace twocs::model
