#include "run_command.hpp"

#include "fold_policy.hpp"
#include "memory_budget.hpp"
#include "progress.hpp"
#include "replay_policy.hpp"
#include "trace_options.hpp"

#include <chrono>

#include <fmt/format.h>

#include <twocs/analysis/breakdown.hpp>
#include <twocs/analysis/steady_state.hpp>
#include <twocs/analysis/summarize.hpp>
#include <twocs/config/scenario_loader.hpp>
#include <twocs/cost/make_cost_model.hpp>
#include <twocs/engine/simulate.hpp>
#include <twocs/error.hpp>
#include <twocs/fileio/output_file.hpp>
#include <twocs/lowering/lower_iteration.hpp>
#include <twocs/lowering/task_count.hpp>
#include <twocs/planning/plan_search.hpp>
#include <twocs/platform/collective_context.hpp>
#include <twocs/platform/topology.hpp>
#include <twocs/report/chrome_trace.hpp>
#include <twocs/report/dag_export.hpp>
#include <twocs/report/html_report.hpp>
#include <twocs/report/json_summary.hpp>
#include <twocs/report/summary_table.hpp>
#include <twocs/report/trace_format.hpp>
#include <twocs/units/format.hpp>

namespace twocs::cli {
namespace {

using Clock = std::chrono::steady_clock;

units::Seconds since(Clock::time_point start) {
  return units::Seconds(std::chrono::duration<double>(Clock::now() - start).count());
}

void write_dag(const std::filesystem::path& path, const lowering::TaskGraph& graph) {
  const bool dot = path.extension() == ".dot" || path.extension() == ".gv";
  fileio::write_file_atomically(path, [&](std::ostream& os) {
    if (dot)
      report::write_dag_dot(os, graph);
    else
      report::write_dag_json(os, graph);
  });
}

lowering::LoweringOptions choose_lowering(const FoldDecision& decision, const model::TrainingPlan& plan,
                                          lowering::CollectivePolicy collectives, spdlog::logger& log) {
  lowering::LoweringOptions lowering;
  lowering.fold_replicas = decision.fold;
  lowering.collectives = std::move(collectives);
  lowering.collectives.folded_peer_traffic = decision.fold && decision.peer_traffic;
  if (decision.inexact())
    log.warn("folding replicas is approximate here: {}; the folded result may be optimistic (--fold off simulates "
             "every device)",
             *decision.hazard);
  if (decision.fold)
    log.info("folding replicas: simulating one device per pipeline stage ({} of {}); --fold off simulates all",
             plan.parallelism.pipeline, plan.world_size());
  else if (decision.hazard && decision.reason.starts_with("not folded"))
    log.info("{}; simulating all {} devices (--fold shared folds with the peers' traffic on those links)",
             decision.reason, plan.world_size());
  return lowering;
}

std::string workload_source(const RunOptions& options) {
  return options.workload ? options.workload->string() : config::embedded_default_workload().name;
}

/// Refuses a plan of more tasks than --max-tasks; `at_least`: `tasks` is a lower bound.
void require_tractable(const RunOptions& options, double tasks, bool at_least) {
  if (tasks <= static_cast<double>(options.max_tasks)) return;
  const bool by_default = options.max_tasks == RunOptions{}.max_tasks;
  InputError too_large(fmt::format("this plan lowers to {}{:.0f} tasks, more than the {} twocs simulates {} "
                                   "(about {} of memory)",
                                   at_least ? "at least " : "", tasks, options.max_tasks,
                                   by_default ? "by default" : "under --max-tasks",
                                   units::to_string(estimated_host_memory(tasks))),
                       "training.global_batch",
                       "simulate fewer micro-batches (training.global_batch), fold replicas (--fold on), or raise "
                       "the limit with --max-tasks if the machine has the memory");
  throw too_large;
}

/// Gives an error found after reading about a key the location of that key in the scenario's
/// files (else the workload file's name); a flag's error keeps its own.
void locate(const RunOptions& options, const config::Scenario& scenario, InputError& error) {
  if (error.key_path().empty() || error.key_path().starts_with('-')) return;
  config::locate_in_scenario(scenario, error);
  if (!error.location()) error.set_location({workload_source(options)});
}

/// How a plan is lowered: folded or not, and with which collectives.
struct SizedLowering {
  FoldDecision fold;
  lowering::LoweringOptions options;
};

/// Counts the plan's tasks and chooses how to lower it, refusing more than --max-tasks or the
/// memory budget (at training.global_batch). count_tasks walks every task and could not finish a
/// walk of 2^30 micro-batches in time or memory, so a plan whose closed-form bound passes the
/// default --max-tasks is checked by that bound first, and the count stops past the larger of
/// --max-tasks and its default (`cap`; folded or, with --fold off, full). Below, a refusal names
/// the exact count.
SizedLowering size_lowering(const RunOptions& options, const config::Scenario& scenario,
                            const model::TrainingPlan& plan, const cost::OperatorCostModel& cost,
                            lowering::CollectivePolicy collectives, spdlog::logger& log) {
  const auto& model = scenario.workload.model;
  try {
    const std::uint64_t cap = std::max(options.max_tasks, RunOptions{}.max_tasks);
    const double least = lowering::least_folded_tasks(model, plan);
    if (least > static_cast<double>(RunOptions{}.max_tasks)) {
      require_tractable(options, least, true);
      require_memory_budget(least, options.memory_budget, true);
    }
    // --fold shared lowers the folded peers' traffic: counted with the folded run's tasks.
    collectives.folded_peer_traffic = options.fold == FoldMode::shared;
    const std::uint64_t off_limit = options.fold == FoldMode::off ? cap : UINT64_MAX;
    lowering::TaskCount tasks = lowering::count_tasks(model, plan, cost, collectives, {cap, off_limit});
    FoldDecision fold = decide_fold(options.fold, scenario.cluster, plan, tasks.full, options.fold_above_tasks);
    if (fold.fold && fold.peer_traffic && !collectives.folded_peer_traffic) { // auto chose it: count it
      collectives.folded_peer_traffic = true;
      tasks = lowering::count_tasks(model, plan, cost, collectives, {cap, off_limit});
    }
    lowering::LoweringOptions lowering_options = choose_lowering(fold, plan, std::move(collectives), log);
    // A count stopped at the limit is past it, whichever of its two counts the fold uses.
    const double under = static_cast<double>(tasks.under(lowering_options));
    const double count = tasks.complete ? under : std::max(under, static_cast<double>(cap) + 1);
    require_tractable(options, count, !tasks.complete);
    require_memory_budget(count, options.memory_budget, !tasks.complete);
    if (tasks.complete) lowering_options.expected_tasks = tasks.under(lowering_options);
    return {std::move(fold), std::move(lowering_options)};
  } catch (InputError& e) {
    locate(options, scenario, e); // at training.global_batch, which sets the micro-batches
    throw;
  }
}

/// One simulated plan: its DAG, its timeline and the fold decision it ran under; with a replayed
/// steady state, the shortened plan's (analysis/steady_state.hpp).
struct PlanRun {
  model::TrainingPlan plan;
  lowering::TaskGraph graph;
  engine::Timeline timeline;
  FoldDecision fold;
  std::optional<analysis::ReplayPlan> replay;
  std::optional<analysis::SteadyState> steady;
};

PlanRun simulate_plan(const RunOptions& options, const config::Scenario& scenario, const model::TrainingPlan& plan,
                      const cost::OperatorCostModel& cost, ProgressReporter& progress, spdlog::logger& log) {
  const auto start = Clock::now();
  const auto& model = scenario.workload.model;
  progress.phase("lowering");
  auto collectives = platform::collective_policy(scenario.cluster, plan.world_size()); // algorithm per kind
  collectives.lowering = options.collective_lowering;
  auto [fold, lowering_options] = size_lowering(options, scenario, plan, cost, std::move(collectives), log);
  lowering::TaskGraph graph = lowering::lower_iteration(model, plan, cost, lowering_options);
  log.info("lowered to {} tasks and {} dependencies in {}", graph.size(), graph.dependency_count(),
           units::to_string(since(start)));

  progress.phase("platform");
  const auto topology = platform::build_topology(scenario.cluster, plan.world_size());
  progress.phase("simulation");
  const auto simulated = Clock::now();
  engine::EngineStats stats;
  engine::EngineOptions engine_options;
  engine_options.log_simgrid = options.verbose;
  engine_options.on_progress = [&progress](const engine::Progress& p) { progress.update(p.done, p.total); };
  engine::Timeline timeline = engine::simulate(graph, topology, engine_options, &stats);
  progress.finish();
  log.info("simulated {} activities in {}", stats.activities, units::to_string(since(simulated)));
  return {plan, std::move(graph), std::move(timeline), std::move(fold), std::nullopt, std::nullopt};
}

/// The plan, or its shortened iteration where --replay replays the steady state and the shortened
/// timeline repeats (else the whole plan after all). Folding is decided on the whole plan's size.
PlanRun simulate_replayed(const RunOptions& options, const config::Scenario& scenario, const model::TrainingPlan& plan,
                          const cost::OperatorCostModel& cost, ProgressReporter& progress, spdlog::logger& log,
                          analysis::Approximations::Replay& info) {
  const ReplayDecision decision = decide_replay(options, scenario.workload.model, plan, scenario.cluster, cost);
  info.reason = decision.reason;
  if (!decision.plan) return simulate_plan(options, scenario, plan, cost, progress, log);
  const analysis::ReplayPlan& replay = *decision.plan;
  RunOptions shortened_options = options;
  shortened_options.fold_above_tasks = options.fold_above_tasks * static_cast<std::uint64_t>(replay.simulated) /
                                       static_cast<std::uint64_t>(replay.micro_batches);
  log.info("replaying the steady state: simulating {} of {} micro-batches per replica", replay.simulated,
           replay.micro_batches);
  PlanRun run = simulate_plan(shortened_options, scenario, analysis::shortened(plan, replay), cost, progress, log);
  if (run.fold.by_task_count) // the count is the shortened iteration's
    run.fold.reason +=
        fmt::format(" (in the {} of {} micro-batches per replica simulated)", replay.simulated, replay.micro_batches);
  std::string why_not;
  const auto measured = analysis::last_finishing_device(run.graph, run.timeline);
  if (auto steady = analysis::find_steady_state(run.graph, run.timeline, replay, measured, why_not)) {
    info = {true, replay.micro_batches, replay.simulated, replay.period, steady->period_time, decision.reason};
    run.replay = replay;
    run.steady = steady;
    return run;
  }
  info.reason = "every micro-batch simulated: " + why_not;
  log.info("not replayed: {}; simulating every micro-batch", why_not);
  run.graph = lowering::TaskGraph(0); // free the shortened run's graph and timeline first
  run.timeline = {};
  return simulate_plan(options, scenario, plan, cost, progress, log);
}

/// Ring collectives lowered coarse: their transfers pay several steps' latencies.
std::int64_t coarse_collectives(const lowering::TaskGraph& graph) {
  std::int32_t last = -1;
  std::int64_t count = 0;
  for (lowering::TaskId id = 0; id < graph.size(); ++id) {
    if (!graph.task(id).is_transfer()) continue;
    const lowering::Transfer& t = graph.transfer(id);
    // A coarse ring's transfers stand for its last step; NCCL's protocol latency (also in
    // latency_steps, collective_protocol.hpp) delays a collective's first step only.
    const bool coarse = t.latency_steps > 1 && t.step > 0;
    if (coarse && t.collective != last) ++count;
    if (coarse) last = t.collective;
  }
  return count;
}

/// The plan to run: the workload's, or the plan search's choice (src/planning) with, for
/// `fastest`, the simulation of the chosen plan so that it does not run twice.
struct ChosenPlan {
  model::TrainingPlan plan;
  analysis::PlanChoice choice;
  std::optional<PlanRun> run;
};

ChosenPlan choose_plan(const RunOptions& options, const config::Scenario& scenario, const cost::OperatorCostModel& cost,
                       spdlog::logger& log) {
  const config::Workload& w = scenario.workload;
  if (w.search.objective == config::PlanObjective::none) return {w.plan, {}, std::nullopt};
  std::optional<PlanRun> best;
  ProgressReporter silent(nullptr, false);
  const planning::Simulate simulate = [&](const model::TrainingPlan& plan,
                                          std::string& why_not) -> std::optional<units::Seconds> {
    try {
      PlanRun run = simulate_plan(options, scenario, plan, cost, silent, log);
      const units::Seconds time = run.timeline.makespan;
      log.info("plan search: {} simulates to {}", planning::describe(plan), units::to_string(time));
      if (!best || time < best->timeline.makespan) best = std::move(run);
      return time;
    } catch (const InputError& e) {
      why_not = e.problem();
      return std::nullopt;
    }
  };
  const auto objective = w.search.objective == config::PlanObjective::fastest ? planning::Objective::fastest
                                                                              : planning::Objective::smallest;
  planning::SearchResult result;
  try {
    result = planning::search_plan(w.model, w.plan, scenario.cluster, cost, objective, w.search.candidates, simulate);
  } catch (InputError& e) {
    locate(options, scenario, e); // at training.parallelism.search
    // --plan-search is applied as that key's --set (overrides_with_plan_flags): name the flag given.
    if (options.plan_search && e.location() &&
        e.location()->file == "--set training.parallelism.search=" + *options.plan_search)
      e.set_location({"--plan-search " + *options.plan_search, 1, 1});
    throw;
  }
  const analysis::PlanChoice choice{std::string(config::to_string(w.search.objective)), result.considered, result.valid,
                                    result.fitting, static_cast<std::int64_t>(result.simulated.size())};
  log.info("plan search ({}): {} of {} valid plans fit; chose {}", choice.objective, choice.fitting, choice.valid,
           planning::describe(result.chosen.plan));
  const bool reuse = best && planning::describe(best->plan) == planning::describe(result.chosen.plan);
  return {result.chosen.plan, choice, reuse ? std::move(best) : std::nullopt};
}

/// --plan-search and --plan-candidates as the workload keys they override, after any --set.
std::vector<std::string> overrides_with_plan_flags(const RunOptions& options) {
  std::vector<std::string> overrides = options.overrides;
  if (options.plan_search) overrides.push_back("training.parallelism.search=" + *options.plan_search);
  if (options.plan_candidates)
    overrides.push_back(fmt::format("training.parallelism.search_candidates={}", *options.plan_candidates));
  return overrides;
}

} // namespace

SimulatedRun simulate_scenario(const RunOptions& options, const config::Scenario& scenario, spdlog::logger& log) {
  const auto& model = scenario.workload.model;
  const auto& cluster = scenario.cluster;
  const auto cost_model = cost::make_cost_model(cluster.device); // the platform's operator model
  ChosenPlan chosen = choose_plan(options, scenario, *cost_model, log);
  const model::TrainingPlan& plan = chosen.plan;
  const auto& par = plan.parallelism;
  log.info("{} on {}: {} devices ({})", model.name, cluster.name, plan.world_size(), model::describe_degrees(par));

  check_trace_filter(options.trace_filter, plan.world_size());
  const auto memory = analysis::summarize_memory(model, plan, cluster);
  if (!memory.fits) {
    if (!options.ignore_memory) analysis::require_fit(memory);
    log.warn("the plan needs {} per device but the device has {}; simulating anyway (--ignore-memory)",
             units::to_string(memory.peak), units::to_string(memory.capacity));
  }

  ProgressReporter progress(options.quiet ? nullptr : options.progress, options.progress_terminal);
  analysis::Approximations::Replay replay{
      false, plan.micro_batches(), plan.micro_batches(), 0, {}, "every micro-batch simulated: a plan search's choice"};
  PlanRun run = chosen.run ? std::move(*chosen.run)
                           : simulate_replayed(options, scenario, plan, *cost_model, progress, log, replay);

  analysis::Summary summary = analysis::summarize(run.graph, run.timeline, model, plan, cluster, memory);
  if (run.replay) analysis::add_left_out_periods(summary, run.graph, run.timeline, *run.replay, *run.steady);
  summary.approximations = {run.fold.fold, run.fold.reason,
                            std::string(lowering::to_string(options.collective_lowering)),
                            coarse_collectives(run.graph), replay};
  summary.plan_choice = chosen.choice;
  std::vector<report::CounterTrack> counters;
  if (options.trace)
    counters = report::trace_counters(run.graph, run.timeline, platform::build_topology(cluster, plan.world_size()),
                                      memory.report, par, options.trace_filter);
  return {std::move(summary), std::move(run.graph), std::move(run.timeline), std::move(counters)};
}

SimulatedRun simulate_run(const RunOptions& options, spdlog::logger& log) {
  const auto start = Clock::now();
  const config::Scenario scenario =
      config::load_scenario({options.workload, options.platform, overrides_with_plan_flags(options)});
  if (!options.platform && options.workload)
    log.info("platform {}: {}", scenario.platform_file,
             scenario.platform_file.starts_with('<') ? "the workload names none (write platform: PATH in it)"
                                                     : "named by the workload's platform: key");
  SimulatedRun run = simulate_scenario(options, scenario, log);
  run.summary.wall_time = since(start);
  return run;
}

void run_simulation(const RunOptions& options, std::ostream& out, spdlog::logger& log) {
  const SimulatedRun run = simulate_run(options, log);
  if (options.json) fileio::write_file_atomically(*options.json, report::json_summary(run.summary));
  if (options.trace) {
    if (const auto mirrored = mirrored_trace_devices(options.trace_filter, run.graph); !mirrored.empty())
      log.warn("--trace-devices: folding mirrors device{} {} instead of simulating, so the trace has no events of "
               "{} (--fold off simulates every device)",
               mirrored.size() > 1 ? "s" : "", device_ranges(mirrored), mirrored.size() > 1 ? "them" : "it");
    fileio::write_file_atomically(*options.trace, [&](std::ostream& os) {
      report::write_trace(os, options.trace_format, run.graph, run.timeline, run.trace_counters, options.trace_filter);
    });
  }
  if (options.report)
    fileio::write_file_atomically(*options.report, [&](std::ostream& os) {
      report::write_html_report(os, run.summary, run.graph, run.timeline);
    });
  if (options.dag) write_dag(*options.dag, run.graph);
  if (!options.quiet) out << report::summary_table(run.summary);
}

} // namespace twocs::cli
