// Megatron-Core's MoE overlaps (training.overlap.shared_experts, expert_wgrad, expert_comm):
// the combinations Megatron-Core refuses (transformer_config.py, __post_init__) and those twocs
// does not simulate.
#include "validate_moe_overlap.hpp"

#include <fmt/format.h>

#include <twocs/error.hpp>

namespace twocs::model::detail {
namespace {

constexpr const char* expert_comm_key = "training.overlap.expert_comm";

void refuse_expert_comm(const char* problem, const char* fix) {
  throw InputError(std::string("training.overlap.expert_comm ") + problem, expert_comm_key, fix);
}

} // namespace

void validate_moe_overlaps(const TransformerConfig& m, const TrainingPlan& plan) {
  // Megatron-Core: "shared_experts recompute cannot work with --moe-shared-expert-overlap".
  if (plan.recompute == Recompute::selective && plan.recompute_modules.shared_experts && plan.overlap.shared_experts)
    throw InputError("training.recompute_modules lists shared_experts, which cannot be recomputed while "
                     "training.overlap.shared_experts runs them under the token exchanges",
                     "training.overlap.shared_experts",
                     "set shared_experts: false here, or remove shared_experts from training.recompute_modules");
  // Megatron-Core's --overlap-dispatch-backward-with-experts-wgrad: no other framework delays them.
  if (plan.overlap.expert_wgrad && plan.framework != Framework::megatron_lm)
    throw InputError(fmt::format("training.overlap.expert_wgrad is Megatron-Core's "
                                 "--overlap-dispatch-backward-with-experts-wgrad, but training.framework is {}",
                                 to_string(plan.framework)),
                     "training.overlap.expert_wgrad", "use framework: megatron-lm, or remove expert_wgrad");
  if (!plan.overlap.expert_comm) return;
  const Parallelism& par = plan.parallelism;
  if (!m.moe || par.expert <= 1)
    refuse_expert_comm("overlaps expert-parallel token exchanges, and this plan has none",
                       "set training.parallelism.expert > 1 on a model with model.moe, or expert_comm: false");
  if (plan.framework != Framework::megatron_lm)
    refuse_expert_comm("is Megatron-Core's (--overlap-moe-expert-parallel-comm)",
                       "set training.framework: megatron-lm, or expert_comm: false");
  if (par.pipeline > 1 && par.virtual_stages == 1)
    refuse_expert_comm("needs the interleaved schedule when there are pipeline stages (Megatron-Core asserts it)",
                       "set training.parallelism.virtual_stages > 1, or expert_comm: false");
  if (plan.pipeline_schedule == PipelineSchedule::gpipe)
    refuse_expert_comm("pairs each forward with a backward, which GPipe does not",
                       "set training.pipeline_schedule: 1f1b, or expert_comm: false");
  if (plan.recompute == Recompute::full)
    refuse_expert_comm("cannot run with full recomputation (Megatron-Core refuses it)",
                       "set training.recompute: selective or none, or expert_comm: false");
  if (plan.recompute == Recompute::selective && plan.recompute_modules.moe)
    refuse_expert_comm("cannot run while recompute_modules lists moe (Megatron-Core refuses it)",
                       "remove moe from training.recompute_modules, or set expert_comm: false");
  if (plan.overlap.shared_experts || plan.overlap.expert_wgrad)
    refuse_expert_comm("replaces shared_experts and expert_wgrad, which Megatron-Core refuses beside it",
                       "set shared_experts: false and expert_wgrad: false, or expert_comm: false");
  if (m.mtp_layers > 1)
    refuse_expert_comm("supports at most one multi-token-prediction layer (Megatron-Core asserts it)",
                       "set model.mtp_layers: 1, or expert_comm: false");
  if (plan.optimizer.sharding == OptimizerSharding::full)
    refuse_expert_comm("with per-layer weight gathers (sharding: full) is not simulated yet",
                       "set training.optimizer.sharding: optimizer or none, or expert_comm: false");
}

} // namespace twocs::model::detail
