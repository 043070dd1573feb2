// CUDA graphs (training.host.cuda_graphs), the sync-free dispatcher and DeepEP's FP8 padding:
// the combinations Megatron-Core refuses (megatron/core/transformer/transformer_config.py,
// __post_init__, at d98e8a64), the one no graph can hold (a host synchronisation inside the
// captured step) and a padding choice for a dispatcher that has none.
#include "validate_cuda_graphs.hpp"

#include <string>

#include <fmt/format.h>

#include <twocs/error.hpp>

namespace twocs::model::detail {
namespace {

constexpr const char* graphs_key = "training.host.cuda_graphs";
constexpr const char* sync_free_key = "training.parallelism.sync_free_dispatch";

void refuse_graphs(const TrainingPlan& plan, const std::string& problem, const char* fix) {
  throw InputError(fmt::format("training.host.cuda_graphs: {} {}", to_string(plan.host.cuda_graphs), problem),
                   graphs_key, fix);
}

void validate_sync_free_dispatch(const TransformerConfig& m, const Parallelism& par) {
  if (!par.sync_free_dispatch) return;
  if (!m.moe)
    throw InputError("training.parallelism.sync_free_dispatch sizes an expert dispatcher's buffers, but the model has "
                     "no experts (model.moe)",
                     sync_free_key, "remove sync_free_dispatch, or give the model a model.moe");
  // Megatron-Core's sync-free MoE needs the flex dispatcher with HybridEP (paged_stash.md); the
  // NCCL all-to-all takes its split sizes on the host (token_dispatcher.py, token_dispatch).
  if (!is_flex(par.expert_dispatcher))
    throw InputError("training.parallelism.sync_free_dispatch needs a dispatcher that learns the token counts on the "
                     "device, and the all-to-all dispatcher passes them to NCCL from the host",
                     sync_free_key,
                     "set training.parallelism.expert_dispatcher: hybridep, or remove sync_free_dispatch");
}

/// fused_permute_pad chooses where DeepEP's rows are padded for FP8; the all-to-all dispatcher
/// always pads in the experts and HybridEP in its own permutation.
void validate_fused_permute_pad(const Parallelism& par) {
  if (par.fused_permute_pad || par.expert_dispatcher == ExpertDispatcher::deepep) return;
  throw InputError("training.parallelism.fused_permute_pad: false chooses where DeepEP pads its rows for FP8, and "
                   "the expert dispatcher is not DeepEP",
                   "training.parallelism.fused_permute_pad",
                   "set training.parallelism.expert_dispatcher: deepep, or remove fused_permute_pad");
}

} // namespace

void validate_cuda_graphs(const TransformerConfig& m, const TrainingPlan& plan) {
  validate_sync_free_dispatch(m, plan.parallelism);
  validate_fused_permute_pad(plan.parallelism);
  if (plan.host.cuda_graphs == CudaGraphs::none) return;
  if (plan.framework != Framework::megatron_lm)
    refuse_graphs(
        plan,
        fmt::format("is Megatron-Core's (--cuda-graph-impl), but training.framework is {}", to_string(plan.framework)),
        "set training.framework: megatron-lm, or cuda_graphs: none");
  // "full recompute is only supported with full iteration CUDA graph."
  if (plan.host.cuda_graphs == CudaGraphs::partial && plan.recompute == Recompute::full)
    refuse_graphs(plan, "cannot run with full recomputation (Megatron-Core refuses per-layer graphs with it)",
                  "set training.recompute: selective or none, or cuda_graphs: full");
  // A MoE layer's dispatch has dynamic shapes: the host waits for the token counts in every MoE
  // layer, which a captured graph cannot do (docs/user-guide/features/cuda_graph.md, "MoE Model
  // Training"); only the sync-free MoE can run in a full-iteration graph.
  if (plan.host.cuda_graphs == CudaGraphs::full && m.moe && !plan.parallelism.sync_free_dispatch)
    refuse_graphs(plan,
                  "captures the whole forward-backward, but the MoE dispatcher synchronises the host for the token "
                  "counts in every MoE layer",
                  "set training.parallelism.sync_free_dispatch: true with expert_dispatcher: hybridep (Megatron-Core's "
                  "sync-free MoE, HybridEP with --moe-expert-rank-capacity-factor), or cuda_graphs: partial");
}

} // namespace twocs::model::detail
