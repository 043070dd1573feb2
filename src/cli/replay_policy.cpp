#include "replay_policy.hpp"

#include <cctype>

#include <fmt/format.h>

#include <twocs/error.hpp>
#include <twocs/lowering/task_count.hpp>

namespace twocs::cli {

ReplayDecision decide_replay(const RunOptions& options, const model::TransformerConfig& model,
                             const model::TrainingPlan& plan, const cost::OperatorCostModel& cost) {
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
    if (options.trace || options.report || options.dag)
      return {std::nullopt, "every micro-batch simulated: a trace, report or DAG shows them all (--replay on "
                            "replays anyway)"};
    const auto tasks = lowering::count_tasks(model, plan, cost, {}, {UINT64_MAX, options.fold_above_tasks});
    if (tasks.full <= options.fold_above_tasks)
      return {std::nullopt,
              fmt::format("every micro-batch simulated: the full run has at most {} tasks", options.fold_above_tasks)};
  }
  return {replay, fmt::format("--replay {}: {} of {} micro-batches per replica simulated, the steady state's "
                              "period of {} repeated",
                              options.replay == ReplayMode::on ? "on" : "auto", replay->simulated,
                              replay->micro_batches, replay->period)};
}

ReplayMode parse_replay_mode(std::string_view text) {
  std::string mode(text);
  for (char& c : mode) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (mode == "auto") return ReplayMode::automatic;
  if (mode == "on") return ReplayMode::on;
  if (mode == "off") return ReplayMode::off;
  throw InputError(fmt::format("--replay: '{}' is not a replay mode; it accepts auto, on or off", text), "--replay",
                   fmt::format("pass --replay auto (replay the steady state of runs over {} tasks, the default), "
                               "--replay on (whenever the schedule allows) or --replay off (simulate every "
                               "micro-batch)",
                               RunOptions{}.fold_above_tasks));
}

} // namespace twocs::cli
