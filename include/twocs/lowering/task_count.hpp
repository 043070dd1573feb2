// How many tasks an iteration lowers to, counted without building the DAG, so that the command
// line can refuse plans too large to simulate before spending memory on them.
//
// The count comes from the lowering itself: it lowers the folded iteration (one device per
// pipeline stage, its collectives mirrored) into a sink that only counts, and scales it to the
// full run by symmetry. Every tensor-parallel peer and data-parallel replica of a stage runs the
// same program, so each kernel and each message between two simulated devices (pipeline sends,
// the embedding all-reduce) stands for t d of them; each folded collective over n devices
// reports how many transfers it has unfolded (TaskSink::on_folded_collective), and the t d
// replicas of the stage hold t d / n such groups.
#pragma once

#include <cstdint>

#include <twocs/cost/operator_cost_model.hpp>
#include <twocs/lowering/lower_iteration.hpp>
#include <twocs/model/training_plan.hpp>
#include <twocs/model/transformer.hpp>

namespace twocs::lowering {

struct TaskCount {
  std::uint64_t full = 0;   // every device simulated (saturates at the largest std::uint64_t)
  std::uint64_t folded = 0; // one device per pipeline stage (LoweringOptions::fold_replicas)
  /// False when the count stopped at its limit (TaskCountLimit): the counts are lower bounds.
  bool complete = true;

  [[nodiscard]] std::uint64_t under(const LoweringOptions& options) const {
    return options.fold_replicas ? folded : full;
  }
};

/// Where counting may stop: once the folded count exceeds `folded`, or the full one `full`, the
/// plan is too large for any limit the caller has, and walking on (a ring over 2^17 ranks has a
/// step per rank, for every bucket) would take minutes.
struct TaskCountLimit {
  std::uint64_t folded = UINT64_MAX;
  std::uint64_t full = UINT64_MAX;
};

/// Exact task counts of lower_iteration, folded and not, or lower bounds when a limit stopped
/// the count. Costs about as much time as the folded lowering and almost no memory. `cost`
/// only labels kernels here; any model will do.
[[nodiscard]] TaskCount count_tasks(const model::TransformerConfig& model, const model::TrainingPlan& plan,
                                    const cost::OperatorCostModel& cost, const CollectivePolicy& collectives = {},
                                    TaskCountLimit limit = {});

/// A lower bound on the folded lowering's tasks, in closed form and floating point (no count can
/// wrap): each replica's micro-batches run every layer forward and backward, a kernel at least
/// each. count_tasks walks every task, so a plan of 2^30 micro-batches is refused by this bound
/// before a walk that could not finish in time or memory.
[[nodiscard]] double least_folded_tasks(const model::TransformerConfig& model, const model::TrainingPlan& plan);

/// The same, with a cost model of its own: lower_iteration's size under `options`.
[[nodiscard]] std::uint64_t estimate_task_count(const model::TransformerConfig& model, const model::TrainingPlan& plan,
                                                const LoweringOptions& options = {});

} // namespace twocs::lowering
