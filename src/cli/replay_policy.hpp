// Whether `twocs run` replays a plan's steady state (--replay; analysis/steady_state.hpp): the
// decision and the value of the flag.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <twocs/analysis/steady_state.hpp>
#include <twocs/cost/operator_cost_model.hpp>
#include <twocs/model/transformer.hpp>

#include "run_command.hpp"

namespace twocs::cli {

struct ReplayDecision {
  std::optional<analysis::ReplayPlan> plan; // the shortened iteration, when it replays
  std::string reason;                       // why it replays or not, for the summary
};

/// --replay off: never; on: whenever the schedule has a replayable steady state long enough
/// (analysis::choose_replay); auto (the default): as on, for plans whose full run exceeds
/// options.fold_above_tasks tasks and that write no trace, report or DAG (those show every
/// micro-batch).
[[nodiscard]] ReplayDecision decide_replay(const RunOptions& options, const model::TransformerConfig& model,
                                           const model::TrainingPlan& plan, const cost::OperatorCostModel& cost);

/// The value of --replay (auto, on, off); throws InputError naming the flag, what it accepts and the fix.
[[nodiscard]] ReplayMode parse_replay_mode(std::string_view text);

} // namespace twocs::cli
