// How an iteration is trained: batch, precision and the parallelization plan
// (the workload file's `training:`).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <twocs/model/cuda_graphs.hpp>
#include <twocs/model/dtype.hpp>
#include <twocs/units/quantity.hpp>

namespace twocs::model {

/// zb_h1: zero-bubble 1F1B (Qi et al., ICLR 2024, ZB-H1); dualpipe: DeepSeek-V3's bidirectional
/// schedule (DeepSeek-AI 2024, arXiv 2412.19437, section 3.2.1) (docs/simulation.md, "Pipeline schedules").
enum class PipelineSchedule { gpipe, one_f_one_b, interleaved_one_f_one_b, zb_h1, dualpipe };
/// selective: Korthikanti et al. 2022's attention-core recomputation; selective_op: torchtitan's
/// per-operator policy (docs/memory-model.md, "Activations").
enum class Recompute { none, selective, full, selective_op };

/// What `recompute: selective` re-runs before a layer's backward: Megatron-Core's
/// --recompute-modules (megatron/core/transformer/transformer_config.py, `recompute_modules`,
/// default ["core_attn"]), as its Transformer Engine layer spec builds the layer
/// (docs/memory-model.md, "Recomputed modules").
struct RecomputeModules {
  bool core_attn = true;       // the attention core (Korthikanti et al. 2022, section 4.2)
  bool layernorm = false;      // the norms not fused into the next linear: MoE's pre-MLP norm, MLA's input norm
  bool moe_act = false;        // the experts' activation (fc2's input)
  bool mla_up_proj = false;    // MLA's query and key/value up-projections and RoPE
  bool mlp = false;            // the whole dense MLP, norm included (dense layers only)
  bool moe = false;            // the whole MoE layer: router, dispatch, experts, combine, shared experts
  bool shared_experts = false; // the shared experts' MLP
  friend bool operator==(const RecomputeModules&, const RecomputeModules&) = default;
};

/// Megatron-Core's names of the modules, in its order (the workload's `training.recompute_modules`).
inline constexpr std::array<std::string_view, 7> recompute_module_names = {
    "core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe", "shared_experts"};
/// No module: the list `[]`.
[[nodiscard]] constexpr RecomputeModules no_recompute_modules() {
  RecomputeModules m;
  m.core_attn = false;
  return m;
}
/// `modules` with the one named recompute_module_names[index] added.
[[nodiscard]] RecomputeModules with_recompute_module(RecomputeModules modules, std::size_t index);
/// The names of the modules `modules` holds, in recompute_module_names's order.
[[nodiscard]] std::vector<std::string_view> names_of(const RecomputeModules& modules);
enum class OptimizerKind { adam, sgd };
/// ZeRO stages (Rajbhandari et al. SC'20): optimizer = ZeRO-1 / Megatron distributed optimizer,
/// gradients = ZeRO-2, full = ZeRO-3 / FSDP.
enum class OptimizerSharding { none, optimizer, gradients, full };
/// How the attention core runs: `unfused` as Megatron-LM's separate kernels (scores GEMM,
/// scale-mask-softmax, dropout, context GEMM) with the s x s scores in HBM; `fused` as one
/// FlashAttention kernel that keeps them on chip (Dao et al., NeurIPS 2022).
enum class AttentionKernel { unfused, fused };

[[nodiscard]] constexpr std::string_view to_string(AttentionKernel a) {
  return a == AttentionKernel::fused ? "fused" : "unfused";
}

/// How the layer's memory-bound operators run: `fused` as one kernel each (Megatron-LM, Transformer
/// Engine, torch.compile); `eager` as PyTorch eager mode runs torchtitan's Llama code, every
/// operator of RMSNorm, rotary embeddings, SwiGLU and grouped-query K/V repetition its own
/// kernel with fp32 intermediates (docs/simulation.md, "Eager kernels").
enum class KernelFusion { fused, eager };

[[nodiscard]] constexpr std::string_view to_string(KernelFusion k) {
  return k == KernelFusion::eager ? "eager" : "fused";
}

/// How PyTorch's cross entropy runs under `framework: fsdp` (torchtitan components/loss.py):
/// `eager`, F.cross_entropy on the logits cast to fp32, which holds fp32 vocabulary tensors for
/// its backward; `compiled`, the same function under torch.compile (torchtitan compiles it with
/// training.compile from 2025-02 on), which keeps the 16-bit logits and produces their gradient
/// in one kernel (docs/memory-model.md, "The loss").
enum class LossKernel { eager, compiled };

[[nodiscard]] constexpr std::string_view to_string(LossKernel k) {
  return k == LossKernel::compiled ? "compiled" : "eager";
}

/// How the tensor-parallel all-gathers and reduce-scatters of sequence parallelism overlap the
/// linear layers' GEMMs beside them (the workload's `training.overlap.tp_comm`; docs/simulation.md,
/// "Tensor-parallel communication overlap"):
/// `none`: Megatron-LM's all-gather before the GEMM and reduce-scatter after it, each blocking;
/// `transformer_engine`: Transformer Engine's userbuffers (Megatron-Core --tp-comm-overlap):
///   t GEMM chunks under a ring exchange of the shards, 4 GEMM chunks each followed by the
///   reduce-scatter of its rows (transformer_engine/pytorch/module/base.py, initialize_ub);
/// `async_tp`: PyTorch's micro-pipelined tensor parallelism (torchtitan's
///   enable_async_tensor_parallel, torch/distributed/_symmetric_memory): t GEMM chunks under
///   copies of the peers' shards, t chunks each copied to its rank, then the partial sums reduced.
enum class TpCommOverlap { none, transformer_engine, async_tp };

[[nodiscard]] constexpr std::string_view to_string(TpCommOverlap o) {
  return o == TpCommOverlap::transformer_engine ? "transformer_engine"
         : o == TpCommOverlap::async_tp         ? "async_tp"
                                                : "none";
}

/// How Transformer Engine's userbuffers overlap a row-parallel GEMM with its reduce-scatter
/// (`training.overlap.tp_comm_reduce_scatter`): `pipeline`, its default (4 GEMM chunks, each one's
/// rows reduce-scattered while the next runs), or `ring_exchange` (t chunks, each the rows one
/// rank owns, sent to it while the next runs, then one kernel sums the t partials), which
/// NeMo's and Megatron-Bridge's FP8 H100 presets choose for proj_fprop and fc2_fprop.
enum class TpReduceScatter { pipeline, ring_exchange };

/// SMs Transformer Engine withholds from the GEMM of each GEMM + reduce-scatter pair for the
/// communication kernel beside it (`training.overlap.tp_comm_sm_margin`): a userbuffers config's
/// `num_sm` where it sets `set_sm_margin`, so that the GEMM runs on the device's SMs less these
/// for the whole pair (transformer_engine/pytorch/csrc/comm_gemm_overlap.h at v1.8, `_math_sms`).
/// 0: Transformer Engine's default (`set_sm_margin` 0).
struct TpSmMargin {
  std::int64_t proj_fprop = 0; // the attention output's forward GEMM
  std::int64_t fc2_fprop = 0;  // fc2's forward GEMM
};

/// The training framework whose behaviours the lowering follows (docs/simulation.md, "Framework"):
/// `megatron_lm` batches each pipeline exchange and synchronises the host after it; `megatron_deepspeed`
/// (DeepSpeed's pipeline engine) sends and receives one tensor at a time, blocking, and reduces
/// gradients after the last micro-batch; `fsdp` (PyTorch FSDP) has no pipeline exchanges.
enum class Framework { megatron_lm, megatron_deepspeed, fsdp };
[[nodiscard]] std::string_view to_string(Framework f);

/// How context-parallel ranks share keys and values (the workload's
/// `training.parallelism.context_comm`; docs/simulation.md, "Context parallelism"):
/// `ring`: cp - 1 steps, each handing a K/V block to the next rank while attention runs on the
///   current one (ring attention, Liu et al. 2023; Megatron-Core / Transformer Engine
///   cp_comm_type "p2p");
/// `all_gather`: all-gather K and V before attention, reduce-scatter dK and dV after its
///   backward (Llama 3, Dubey et al. 2024, section 3.3.2; Transformer Engine "all_gather");
/// `all_to_all`: trade the sequence split for a head split before attention and back after it
///   (DeepSpeed-Ulysses, Jacobs et al. 2023; Transformer Engine "a2a", AttnFuncWithCPAndQKVOA2A).
enum class ContextComm { ring, all_gather, all_to_all };
/// How tokens reach their experts' ranks (expert parallelism):
/// `all_to_all`: Megatron-Core's all-to-all dispatcher, one copy per routed expert
///   (token_dispatcher.py, MoEAlltoAllTokenDispatcher);
/// `deepep`: DeepEP's normal kernels (--moe-token-dispatcher-type flex --moe-enable-deepep): each
///   token once per destination rank; across nodes once per node over the network, to the rank of
///   the same local index, which forwards it over NVLink (DeepSeek-AI 2024, section 3.2.2);
/// `hybridep`: the flex dispatcher's HybridEP backend (--moe-flex-dispatcher-backend hybridep):
///   DeepEP's traffic, its own permutation, which pads for FP8 without host synchronisations
///   (token_dispatcher.py at d98e8a6, _HybridEPManager).
enum class ExpertDispatcher { all_to_all, deepep, hybridep };
/// DeepEP and HybridEP, the flex dispatcher's backends: tokens once per destination rank, the
/// counts learnt on the device, the permutation after the dispatch.
[[nodiscard]] constexpr bool is_flex(ExpertDispatcher d) { return d != ExpertDispatcher::all_to_all; }
[[nodiscard]] constexpr std::string_view to_string(ContextComm c) {
  return c == ContextComm::ring ? "ring" : c == ContextComm::all_gather ? "all_gather" : "all_to_all";
}

[[nodiscard]] std::string_view to_string(PipelineSchedule s);
[[nodiscard]] std::string_view to_string(Recompute r);
[[nodiscard]] std::string_view to_string(OptimizerKind k);
[[nodiscard]] std::string_view to_string(OptimizerSharding s);

struct Parallelism {
  std::int64_t tensor = 1;                      // t: Megatron tensor (intra-layer) parallel degree
  std::int64_t pipeline = 1;                    // p: pipeline stages
  std::int64_t data = 1;                        // d: data-parallel replicas
  bool sequence = false;                        // Megatron sequence parallelism (Korthikanti et al. 2022)
  std::int64_t virtual_stages = 1;              // v: model chunks per pipeline rank
  std::vector<std::int64_t> stage_layers;       // explicit layers per stage; empty = balancing rule
  std::int64_t context = 1;                     // cp: context-parallel degree (sequence split over cp ranks)
  std::int64_t expert = 1;                      // ep: expert-parallel degree, carved out of data x context
  ContextComm context_comm = ContextComm::ring; // how the cp ranks exchange keys and values
  ExpertDispatcher expert_dispatcher = ExpertDispatcher::all_to_all; // how tokens reach their experts
  /// The dispatcher never tells the host the token counts: buffers sized ahead from a capacity
  /// (Megatron-Core's sync-free MoE: HybridEP with --moe-expert-rank-capacity-factor,
  /// docs/user-guide/features/paged_stash.md at d98e8a64), so no host synchronisation per MoE layer.
  bool sync_free_dispatch = false;
  /// DeepEP under FP8 pads each expert's rows inside its permutation (Megatron-Core from 554ce49,
  /// 2026-02-07, "Fuse permute+pad and unpermute+unpad ops for FP8/FP4 training"); false: the code
  /// before it (the moe_perf baselines' cf39a4d), where DeepEP permutes unpadded and the experts
  /// copy their rows into padded buffers (Fp8Padding), as with the all-to-all dispatcher.
  bool fused_permute_pad = true;
};

/// The degrees whose product is the world size, as messages show it: "tensor 2 x context 4 x
/// pipeline 1 x data 2" (context only when > 1), and the expert degree the stage's ranks share
/// when > 1 (it multiplies no device).
[[nodiscard]] std::string describe_degrees(const Parallelism& p);

struct OptimizerPlan {
  OptimizerKind kind = OptimizerKind::adam;
  OptimizerSharding sharding = OptimizerSharding::none;
};

struct OverlapPlan {
  /// Reduce data-parallel gradients in buckets during the last micro-batch's backward pass
  /// (PyTorch DDP; Li et al. VLDB'20) instead of all at once after it.
  bool dp_grad_reduce = true;
  units::Bytes bucket_size = units::Bytes(25e6); // PyTorch DDP default bucket_cap_mb = 25
  /// Overlap the backward tensor-parallel all-reduce of a column-parallel layer's input gradient
  /// with its weight-gradient GEMM (Megatron-LM --async-tensor-model-parallel-allreduce).
  bool tp_async_backward = true;
  /// Run the shared experts on their own stream while the MoE dispatch and combine exchange
  /// tokens (Megatron-Core --moe-shared-expert-overlap; default False, transformer_config.py).
  bool shared_experts = false;
  /// Delay the routed experts' weight-gradient GEMMs until the dispatch's backward all-to-all is
  /// in flight (Megatron-Core --overlap-dispatch-backward-with-experts-wgrad; default False).
  bool expert_wgrad = false;
  /// Merge each steady-state forward with the backward it pairs with, layer by layer, so that
  /// one micro-batch's MoE token exchanges run under the other's computation (Megatron-Core
  /// --overlap-moe-expert-parallel-comm with --delay-wgrad-compute, combined_1f1b.py; default False).
  bool expert_comm = false;
  /// With a sharded optimizer, gather the updated weights during the next forward pass, layer by
  /// layer, each gather waited for by its layer and the next one prefetched, instead of all at
  /// once after the step (Megatron-Core --overlap-param-gather, default False: distributed_data_
  /// parallel_config.py; param_and_grad_buffer.py finish_param_sync waits for its bucket and
  /// dispatches the next). In a simulated iteration: the first forward of each layer gathers it.
  bool param_gather = false;
  /// How the sequence-parallel all-gathers and reduce-scatters overlap their GEMMs (above).
  TpCommOverlap tp_comm = TpCommOverlap::none;
  /// Transformer Engine's method for the GEMM + reduce-scatter pairs (above).
  TpReduceScatter tp_comm_reduce_scatter = TpReduceScatter::pipeline;
  /// SMs withheld from the GEMMs of the GEMM + reduce-scatter pairs (above).
  TpSmMargin tp_comm_sm_margin;
  /// The interleaved schedule's messages between stages posted without batching or host
  /// synchronisation and waited for only before the next pass of their kind, so that a forward's
  /// send and receive run under the backward after it and the reverse (Megatron-Core
  /// ModelParallelConfig.overlap_p2p_comm, schedules.py forward_backward_pipelining_with_
  /// interleaving; default on in Megatron-LM's arguments.py since core_v0.4.0, commit 4eeff55d1f,
  /// off in the config class). Megatron-LM's interleaved schedule only: other schedules and frameworks ignore it.
  bool p2p = false;
};

/// Host (CPU) time and synchronisation (the workload file's `training.host`).
struct HostPlan {
  /// Host work per micro-batch the GPU waits for (data-batch fetch, schedule bookkeeping); no
  /// absolute operator-level figure was found, so 0 by default (a what-if).
  units::Seconds micro_batch_overhead = units::Seconds(0);
  /// Host work per iteration before the optimizer (data loading not hidden by workers, logging).
  units::Seconds iteration_overhead = units::Seconds(0);
  /// Model the framework's host synchronisation points (torch.cuda.synchronize, .item()): all
  /// streams of the device drain before the next kernel. `false` is the ablation.
  bool synchronize = true;
  /// Host time per kernel launch (lowering/device_program.hpp): the workload's
  /// `training.host.launch_time`, else the platform's `node.host_launch_time`; 0 or none: the
  /// host never holds the device back.
  std::optional<units::Seconds> launch_time;
  /// Work the host launches as CUDA graphs, one launch per graph (model/cuda_graphs.hpp).
  CudaGraphs cuda_graphs = CudaGraphs::none;
};

struct TrainingPlan {
  std::int64_t global_batch = 0; // sequences per iteration
  std::int64_t micro_batch = 0;  // sequences per micro-batch
  Dtype dtype = Dtype::bf16;
  Parallelism parallelism;
  PipelineSchedule pipeline_schedule = PipelineSchedule::one_f_one_b;
  Recompute recompute = Recompute::none;
  RecomputeModules recompute_modules; // with recompute: selective
  /// With recompute: full, the layers of each model chunk that are recomputed, its first ones
  /// (Megatron-LM --recompute-method block --recompute-num-layers N, megatron/core/recompute.py);
  /// 0: every layer (--recompute-method uniform --recompute-num-layers 1).
  std::int64_t recompute_layers = 0;
  AttentionKernel attention = AttentionKernel::fused; // every framework since 2023 (FlashAttention, Dao et al. 2022)
  /// Which of the platform's measured fused attention implementations runs (`training.
  /// attention_kernel`: "cudnn", "flash2", as the platform's rows name them); empty: the
  /// platform's default (hardware/attention_kernel.hpp).
  std::string attention_kernel;
  KernelFusion kernels = KernelFusion::fused;
  LossKernel loss = LossKernel::eager; // framework fsdp only: how PyTorch's cross entropy runs
  OptimizerPlan optimizer;
  OverlapPlan overlap;
  Framework framework = Framework::megatron_lm;
  HostPlan host;
  /// Reduce data-parallel gradients in fp32. Default (`auto`): for bf16, as Megatron-LM forces
  /// accumulate_allreduce_grads_in_fp32 with --bf16 (megatron/training/arguments.py) and DeepSpeed's
  /// BF16 optimizer accumulates and reduces fp32 gradients; fp16 reduces fp16 gradients (the flag's
  /// default is False).
  enum class GradReduce { automatic, fp32, model_dtype } grad_reduce = GradReduce::automatic;
  /// Megatron-LM's weight-gradient GEMMs add into the fp32 main gradients themselves
  /// (--gradient-accumulation-fusion, on by default since 2022); `false` is Megatron-LM before
  /// it, with a separate accumulation pass per micro-batch (model/grad_accumulation.hpp).
  bool grad_accumulation_fusion = true;
  /// FP8 primary weights (only with dtype fp8): the linear layers keep their weights in FP8, with
  /// no 16-bit copy, and a sharded optimizer or FSDP gathers them in FP8 (Megatron-LM
  /// --fp8-param-gather, default off; NeMo's and Megatron-Bridge's FP8 recipes turn it on;
  /// torchtitan's float8.enable_fsdp_float8_all_gather). model/fp8_weights.hpp has the bytes.
  bool fp8_params = false;
  /// How FP8 tensors are scaled (only with dtype fp8), Megatron-LM's --fp8-recipe: `delayed`
  /// (its default, Transformer Engine's DelayedScaling) and `tensorwise` (Float8CurrentScaling)
  /// scale each tensor by one factor; `blockwise` (Float8BlockScaling, DeepSeek-V3's recipe)
  /// scales activations and gradients per 1x128 block and weights per 128x128 block, and runs
  /// other GEMM kernels (hardware/fp8_scaling.hpp).
  enum class Fp8Recipe : std::uint8_t { delayed, tensorwise, blockwise } fp8_recipe = Fp8Recipe::delayed;

  /// Bytes per element of the data-parallel gradient reduction under `grad_reduce`.
  [[nodiscard]] double grad_reduce_element_size() const {
    if (grad_reduce == GradReduce::fp32 || dtype == Dtype::fp32) return 4.0;
    if (grad_reduce == GradReduce::automatic && dtype != Dtype::fp16) return 4.0; // bf16, fp8: fp32 main grads
    return 2.0;
  }

  [[nodiscard]] std::int64_t world_size() const {
    return parallelism.tensor * parallelism.context * parallelism.pipeline * parallelism.data;
  }
  /// Micro-batches each data-parallel replica runs per iteration: B / (d * b).
  [[nodiscard]] std::int64_t micro_batches() const { return global_batch / (parallelism.data * micro_batch); }
  /// Model chunks each pipeline rank holds: v, or two under dualpipe (stages i and p - 1 - i of
  /// the p-chunk model, one per direction: DeepSeek-V3 report, section 3.2.1).
  [[nodiscard]] std::int64_t chunks_per_rank() const {
    return pipeline_schedule == PipelineSchedule::dualpipe ? 2 : parallelism.virtual_stages;
  }
};

/// Megatron-LM's block recomputation is in force (recompute: full with training.recompute_layers):
/// each model chunk recomputes its first recompute_layers layers and keeps the others whole.
[[nodiscard]] constexpr bool recomputes_in_blocks(const TrainingPlan& plan) {
  return plan.recompute == Recompute::full && plan.recompute_layers > 0;
}

} // namespace twocs::model
