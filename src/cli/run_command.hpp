// Private: `twocs run`, simulating one training iteration.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <spdlog/logger.h>

#include <twocs/analysis/summary.hpp>
#include <twocs/config/scenario_loader.hpp>
#include <twocs/engine/timeline.hpp>
#include <twocs/lowering/collective_lowering.hpp>
#include <twocs/lowering/task_graph.hpp>
#include <twocs/report/chrome_trace.hpp>
#include <twocs/report/trace_format.hpp>

namespace twocs::cli {

/// Whether to simulate every device or one per pipeline stage (lowering::LoweringOptions).
enum class FoldMode {
  automatic, // fold when the full DAG would exceed fold_above_tasks
  on,
  off,
  shared, // fold, with the folded peers' traffic on the links they share (CollectivePolicy::folded_peer_traffic)
};

/// Whether to simulate every micro-batch or replay a long pipeline's steady state
/// (analysis/steady_state.hpp, replay_policy.hpp).
enum class ReplayMode {
  automatic, // replay plans whose full DAG would exceed fold_above_tasks, unless a trace, report or DAG is written
  on,
  off,
};

struct RunOptions {
  std::optional<std::filesystem::path> workload;
  std::optional<std::filesystem::path> platform;
  std::vector<std::string> overrides;
  std::optional<std::filesystem::path> json;
  std::optional<std::filesystem::path> trace;
  /// By --trace's extension (report/trace_format.hpp).
  report::TraceFormat trace_format = report::TraceFormat::chrome_json;
  /// --trace-devices, --trace-from, --trace-until (trace_options.hpp): what --trace keeps.
  report::TraceFilter trace_filter;
  std::optional<std::filesystem::path> report;
  std::optional<std::filesystem::path> dag;
  bool quiet = false;
  bool verbose = false;
  bool ignore_memory = false;
  /// Plans that lower to more tasks are refused before lowering (about 100 bytes of memory
  /// and 1-2 us of simulation each).
  std::uint64_t max_tasks = 20'000'000;
  /// Host memory the simulation may take, e.g. "8GiB" (memory_budget.hpp); default: the
  /// machine's physical memory.
  std::optional<std::string> memory_budget;
  FoldMode fold = FoldMode::automatic;
  ReplayMode replay = ReplayMode::automatic;
  /// With FoldMode::automatic, plans whose full DAG has more tasks than this are folded (a few
  /// seconds of simulation on one core at about 0.3 M tasks per second).
  std::uint64_t fold_above_tasks = 2'000'000;
  /// Where phases and the progress bar of a long run go (stderr; nullptr: nowhere), and whether
  /// it is a terminal (a bar redrawn in place) or not (plain lines). --quiet silences it.
  std::ostream* progress = nullptr;
  bool progress_terminal = false;
  /// --plan-search and --plan-candidates (parse_plan_search, parse_plan_candidates): they
  /// override training.parallelism.search and search_candidates of the workload.
  std::optional<std::string> plan_search;
  std::optional<std::int64_t> plan_candidates;
  /// --collective-lowering: rings step by step, coarse, or coarse where large (collective_lowering.hpp).
  lowering::CollectiveLowering collective_lowering = lowering::CollectiveLowering::automatic;
};

/// The values of `--fold` and `--max-tasks` as typed on the command line. Throws InputError
/// naming the flag, what it accepts and the fix.
[[nodiscard]] FoldMode parse_fold_mode(std::string_view text);
/// The value of `--replay` (auto, on, off), likewise.
[[nodiscard]] ReplayMode parse_replay_mode(std::string_view text);
[[nodiscard]] std::uint64_t parse_max_tasks(std::string_view text);

/// The values of `--plan-search` (none, smallest, fastest) and `--plan-candidates` (a count from
/// 1): throws InputError naming the flag, what it accepts and the fix.
[[nodiscard]] std::string parse_plan_search(std::string_view text);
[[nodiscard]] std::int64_t parse_plan_candidates(std::string_view text);

/// The value of `--collective-lowering` (step, coarse, auto); throws InputError naming the flag.
[[nodiscard]] lowering::CollectiveLowering parse_collective_lowering(std::string_view text);

/// One simulated iteration: the summary that --json writes, and the DAG and timeline that
/// --trace, --report and --dag render.
struct SimulatedRun {
  analysis::Summary summary;
  lowering::TaskGraph graph;
  engine::Timeline timeline;
  /// The trace's counter tracks (trace_format.hpp), computed only when options.trace is set.
  std::vector<report::CounterTrack> trace_counters;
};

/// simulate_run's work on a scenario already loaded: the plan (or the plan search's choice), the
/// memory check, the fold decision, lowering and simulation, exactly as `twocs run` does them
/// (`twocs validate` simulates each of its rows through here). The summary's wall time is left 0.
[[nodiscard]] SimulatedRun simulate_scenario(const RunOptions& options, const config::Scenario& scenario,
                                             spdlog::logger& log);

/// Loads the scenario, checks memory and simulates it, writing nothing (the Python module's
/// twocs.run and run_simulation below). Throws the errors a user can cause (InputError,
/// OutOfMemoryError); ignores the output paths of `options`.
[[nodiscard]] SimulatedRun simulate_run(const RunOptions& options, spdlog::logger& log);

/// Runs the simulation and writes the requested outputs. Throws the errors a user can cause
/// (InputError, OutOfMemoryError); returns normally on success.
void run_simulation(const RunOptions& options, std::ostream& out, spdlog::logger& log);

} // namespace twocs::cli
