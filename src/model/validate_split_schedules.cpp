// zb-h1 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024) and dualpipe (DeepSeek-V3
// technical report, arXiv 2412.19437, section 3.2.1; github.com/deepseek-ai/DualPipe): the plans
// their reference implementations refuse, and those twocs does not simulate.
#include "validate_split_schedules.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include <twocs/error.hpp>

namespace twocs::model::detail {
namespace {

constexpr const char* schedule_key = "training.pipeline_schedule";

/// Multiples of `step` next to `n`, "a or b" (a only when n is below the first).
std::string multiples_near(std::int64_t n, std::int64_t step) {
  const std::int64_t below = n / step * step;
  if (below < step) return fmt::format("{}", step);
  return fmt::format("{} or {}", below, below + step);
}

void refuse_common(const TrainingPlan& plan) {
  const auto name = to_string(plan.pipeline_schedule);
  // Both reference implementations are Megatron-style runtimes with batched point-to-point calls.
  if (plan.framework != Framework::megatron_lm)
    throw InputError(fmt::format("training.pipeline_schedule {} is not simulated with training.framework {}", name,
                                 to_string(plan.framework)),
                     schedule_key, "set training.framework: megatron-lm, or pipeline_schedule: 1f1b");
  if (plan.optimizer.sharding == OptimizerSharding::full)
    throw InputError(fmt::format("training.pipeline_schedule {} with per-layer weight gathers (sharding: full) is "
                                 "not simulated yet",
                                 name),
                     schedule_key, "set training.optimizer.sharding: optimizer or none, or pipeline_schedule: 1f1b");
  if (plan.overlap.expert_comm)
    throw InputError(fmt::format("training.overlap.expert_comm is Megatron-Core's combined 1F1B, which "
                                 "training.pipeline_schedule {} replaces",
                                 name),
                     "training.overlap.expert_comm", "set expert_comm: false, or pipeline_schedule: 1f1b");
}

/// DualPipe.step asserts an even number of ranks and of micro-batches, at least twice the ranks
/// (deepseek-ai/DualPipe, dualpipe/dualpipe.py).
void validate_dualpipe(const TrainingPlan& plan) {
  const std::int64_t p = plan.parallelism.pipeline;
  if (p < 2 || p % 2 != 0)
    throw InputError(
        fmt::format("training.pipeline_schedule dualpipe needs an even number of pipeline stages, not "
                    "training.parallelism.pipeline = {}",
                    p),
        "training.parallelism.pipeline",
        fmt::format("use pipeline {}, or pipeline_schedule: 1f1b", p < 2 ? std::string("2") : multiples_near(p, 2)));
  const std::int64_t m = plan.micro_batches();
  if (m % 2 != 0 || m < 2 * p) {
    const std::int64_t per_micro_batch = plan.parallelism.data * plan.micro_batch;
    throw InputError(
        fmt::format("training.global_batch gives {} micro-batches per replica (global_batch / (data x "
                    "micro_batch)); training.pipeline_schedule dualpipe needs an even number, at least "
                    "2 x pipeline = {}",
                    m, 2 * p),
        "training.global_batch",
        fmt::format("use global_batch {}, or pipeline_schedule: 1f1b",
                    multiples_near(std::max(plan.global_batch, 2 * p * per_micro_batch), 2 * per_micro_batch)));
  }
}

} // namespace

void validate_split_schedules(const TrainingPlan& plan) {
  if (plan.pipeline_schedule != PipelineSchedule::zb_h1 && plan.pipeline_schedule != PipelineSchedule::dualpipe) return;
  refuse_common(plan);
  if (plan.pipeline_schedule == PipelineSchedule::dualpipe) validate_dualpipe(plan);
}

} // namespace twocs::model::detail
