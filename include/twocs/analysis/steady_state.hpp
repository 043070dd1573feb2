// Replaying the steady state of a 1F1B pipeline (docs/performance.md, "Replaying the steady
// state"): an iteration of M micro-batches is simulated with fewer, M', that keep its warm-up and
// cool-down and a few periods of its steady state; where the simulated timeline repeats there,
// every task of a period's micro-batches shifted by the same time as the next period's, the
// M - M' micro-batches left out are that period repeated, and the summary adds them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <twocs/analysis/summary.hpp>
#include <twocs/engine/timeline.hpp>
#include <twocs/lowering/task_graph.hpp>
#include <twocs/model/training_plan.hpp>

namespace twocs::analysis {

/// How an iteration is shortened: `micro_batches` per pipeline replica in the plan, `simulated`
/// of them run, `period` micro-batches in one repetition of the steady state (1 for 1F1B, the
/// pipeline depth p for the interleaved schedule, whose chunks cycle over groups of p), and the
/// micro-batches [first_checked, first_checked + checked) compared with the period after them.
struct ReplayPlan {
  std::int64_t micro_batches = 0;
  std::int64_t simulated = 0;
  std::int64_t period = 1;
  std::int64_t first_checked = 0;
  std::int64_t checked = 0;
  /// Periods left out: (micro_batches - simulated) / period.
  [[nodiscard]] std::int64_t periods_left_out() const { return (micro_batches - simulated) / period; }
};

/// The shortened iteration for `plan`, or nothing when its schedule has no replayable steady
/// state (only 1F1B and interleaved 1F1B without combined-1F1B overlap) or it is too short to
/// leave out at least two periods.
[[nodiscard]] std::optional<ReplayPlan> choose_replay(const model::TrainingPlan& plan);

/// `plan` with the shortened iteration's global batch.
[[nodiscard]] model::TrainingPlan shortened(const model::TrainingPlan& plan, const ReplayPlan& replay);

/// What the check found: the time one period adds, and a window of that length on the measured
/// device inside the verified steady state.
struct SteadyState {
  units::Seconds period_time;
  units::Seconds window_start;
  units::Seconds deviation; // the largest difference of any checked task's shift from its device's period
};

/// Checks that the shortened run repeats: every task of the checked micro-batches has its twin
/// (same device, kind, label, layer, pass, peer and step, at the same place in the device's
/// lowering order) one period later, shifted by its device's period within a tolerance that
/// bounds the extrapolated iteration's error by 1e-4 of it; that every device repeats at the
/// same period; and that the measured device's window holds only checked tasks. Nothing, with
/// `why_not` set, otherwise.
[[nodiscard]] std::optional<SteadyState> find_steady_state(const lowering::TaskGraph& graph,
                                                           const engine::Timeline& timeline, const ReplayPlan& replay,
                                                           lowering::DeviceId measured, std::string& why_not);

/// Adds the left-out periods to `summary`, the summary of the shortened run under the whole
/// plan: iteration time, the measured device's breakdown, communication and host waits (each
/// the window's, times the periods), and what derives from them.
void add_left_out_periods(Summary& summary, const lowering::TaskGraph& graph, const engine::Timeline& timeline,
                          const ReplayPlan& replay, const SteadyState& steady);

} // namespace twocs::analysis
