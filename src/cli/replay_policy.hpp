// Whether `twocs run` replays a plan's steady state (--replay; analysis/steady_state.hpp): the
// decision and the value of the flag.
#pragma once

#include <optional>
#include <string>

#include <twocs/analysis/steady_state.hpp>
#include <twocs/cost/operator_cost_model.hpp>
#include <twocs/hardware/cluster.hpp>
#include <twocs/model/transformer.hpp>

#include "run_command.hpp"

namespace twocs::cli {

struct ReplayDecision {
  std::optional<analysis::ReplayPlan> plan; // the shortened iteration, when it replays
  std::string reason;                       // why it replays or not, for the summary
};

/// --replay off: never; on: whenever the schedule has a replayable steady state long enough
/// (analysis::choose_replay); auto (the default): as on, where the shortened iteration is at
/// most half the plan, the full run exceeds options.fold_above_tasks tasks, no trace, report or
/// DAG is written (those show every micro-batch), and the replicas do not run at their own paces
/// (unfolded, with speed variation and no per-micro-batch synchronisation between them).
[[nodiscard]] ReplayDecision decide_replay(const RunOptions& options, const model::TransformerConfig& model,
                                           const model::TrainingPlan& plan, const hardware::ClusterSpec& cluster,
                                           const cost::OperatorCostModel& cost);

} // namespace twocs::cli
