#include "replay_policy.hpp"

#include "fold_policy.hpp"

#include <fmt/format.h>

#include <twocs/error.hpp>
#include <twocs/lowering/task_count.hpp>

namespace twocs::cli {

ReplayDecision decide_replay(const RunOptions& options, const model::TransformerConfig& model,
                             const model::TrainingPlan& plan, const hardware::ClusterSpec& cluster,
                             const cost::OperatorCostModel& cost) {
  if (options.replay == ReplayMode::off) return {std::nullopt, "--replay off"};
  auto replay = analysis::choose_replay(plan);
  if (!replay)
    return {std::nullopt, "every micro-batch simulated: the schedule's steady state is not replayed (only 1F1B and "
                          "interleaved 1F1B, with at least two periods to leave out)"};
  // A plan past the default task limit even folded is refused by its size (run_command.cpp), not
  // shortened: counting it would walk every micro-batch.
  if (lowering::least_folded_tasks(model, plan) > static_cast<double>(RunOptions{}.max_tasks))
    return {std::nullopt, "every micro-batch simulated: the plan is past the task limit"};
  if (options.replay == ReplayMode::automatic) {
    // Where the check fails the whole plan runs after the shortened one: worth it only when the
    // shortened one is at most half of it.
    if (2 * replay->simulated > replay->micro_batches)
      return {std::nullopt, fmt::format("every micro-batch simulated: replay would run {} of {} (--replay on "
                                        "replays anyway)",
                                        replay->simulated, replay->micro_batches)};
    if (options.trace || options.report || options.dag)
      return {std::nullopt, "every micro-batch simulated: a trace, report or DAG shows them all (--replay on "
                            "replays anyway)"};
    const auto tasks = lowering::count_tasks(model, plan, cost, {}, {UINT64_MAX, options.fold_above_tasks});
    if (tasks.full <= options.fold_above_tasks)
      return {std::nullopt,
              fmt::format("every micro-batch simulated: the full run has at most {} tasks", options.fold_above_tasks)};
    // Every device simulated with its own speed, replicas that meet only at the end run at their
    // own paces: the timeline as a whole does not repeat, and the check would refuse it.
    const bool folds = decide_fold(options.fold, cluster, plan, tasks.full, options.fold_above_tasks).fold;
    if (!folds && cluster.device.speed_variation.spread > 0 && plan.parallelism.data > 1 &&
        plan.optimizer.sharding != model::OptimizerSharding::full)
      return {std::nullopt, "every micro-batch simulated: unfolded replicas with speed variation run at their own "
                            "paces (--replay on tries anyway)"};
  }
  return {replay, fmt::format("--replay {}: {} of {} micro-batches per replica simulated, the steady state's "
                              "period of {} repeated",
                              options.replay == ReplayMode::on ? "on" : "auto", replay->simulated,
                              replay->micro_batches, replay->period)};
}

} // namespace twocs::cli
