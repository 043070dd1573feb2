#include "run_command.hpp"

#include "fold_policy.hpp"
#include "memory_budget.hpp"
#include "progress.hpp"

#include <cctype>
#include <charconv>
#include <chrono>
#include <limits>

#include <fmt/format.h>

#include <twocs/analysis/summarize.hpp>
#include <twocs/config/scenario_loader.hpp>
#include <twocs/cost/make_cost_model.hpp>
#include <twocs/engine/simulate.hpp>
#include <twocs/error.hpp>
#include <twocs/fileio/output_file.hpp>
#include <twocs/lowering/lower_iteration.hpp>
#include <twocs/lowering/task_count.hpp>
#include <twocs/platform/collective_context.hpp>
#include <twocs/platform/topology.hpp>
#include <twocs/report/chrome_trace.hpp>
#include <twocs/report/dag_export.hpp>
#include <twocs/report/html_report.hpp>
#include <twocs/report/json_summary.hpp>
#include <twocs/report/summary_table.hpp>
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
  if (decision.inexact())
    log.warn("folding replicas is approximate here: {}; the folded result may be optimistic (--fold off simulates "
             "every device)",
             *decision.hazard);
  if (decision.fold)
    log.info("folding replicas: simulating one device per pipeline stage ({} of {}); --fold off simulates all",
             plan.parallelism.pipeline, plan.world_size());
  else if (decision.hazard && decision.reason.starts_with("not folded"))
    log.info("{}; simulating all {} devices", decision.reason, plan.world_size());
  return lowering;
}

void require_tractable(const RunOptions& options, std::uint64_t tasks) {
  if (tasks <= options.max_tasks) return;
  const bool by_default = options.max_tasks == RunOptions{}.max_tasks;
  InputError too_large(fmt::format("this plan lowers to {} tasks, more than the {} twocs simulates {} "
                                   "(about {} of memory)",
                                   tasks, options.max_tasks, by_default ? "by default" : "under --max-tasks",
                                   units::to_string(estimated_host_memory(tasks))),
                       "training",
                       "simulate fewer micro-batches (training.global_batch), fold replicas (--fold on), or raise "
                       "the limit with --max-tasks if the machine has the memory");
  too_large.set_location({options.workload ? options.workload->string() : config::embedded_default_workload().name});
  throw too_large;
}

} // namespace

FoldMode parse_fold_mode(std::string_view text) {
  std::string mode(text);
  for (char& c : mode) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (mode == "auto") return FoldMode::automatic;
  if (mode == "on") return FoldMode::on;
  if (mode == "off") return FoldMode::off;
  throw InputError(fmt::format("--fold: '{}' is not a fold mode; it accepts auto, on or off", text), "--fold",
                   fmt::format("pass --fold auto (fold when the full run exceeds {} tasks, the default), --fold on "
                               "(one device per pipeline stage) or --fold off (every device)",
                               RunOptions{}.fold_above_tasks));
}

std::uint64_t parse_max_tasks(std::string_view text) {
  std::uint64_t value = 0;
  const auto* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end || value == 0)
    throw InputError(fmt::format("--max-tasks: '{}' is not a task count; it accepts a whole number from 1 to {}", text,
                                 std::numeric_limits<std::uint64_t>::max()),
                     "--max-tasks",
                     fmt::format("pass a positive whole number without separators, e.g. --max-tasks 50000000 "
                                 "(the default is {})",
                                 RunOptions{}.max_tasks));
  return value;
}

void run_simulation(const RunOptions& options, std::ostream& out, spdlog::logger& log) {
  const auto start = Clock::now();
  const config::Scenario scenario = config::load_scenario({options.workload, options.platform, options.overrides});
  const auto& model = scenario.workload.model;
  const auto& plan = scenario.workload.plan;
  const auto& cluster = scenario.cluster;
  log.info("{} on {}: {} devices (tensor {} x pipeline {} x data {})", model.name, cluster.name, plan.world_size(),
           plan.parallelism.tensor, plan.parallelism.pipeline, plan.parallelism.data);

  const auto memory = analysis::summarize_memory(model, plan, cluster);
  if (!memory.fits) {
    if (!options.ignore_memory) analysis::require_fit(memory);
    log.warn("the plan needs {} per device but the device has {}; simulating anyway (--ignore-memory)",
             units::to_string(memory.peak), units::to_string(memory.capacity));
  }

  ProgressReporter progress(options.quiet ? nullptr : options.progress, options.progress_terminal);
  progress.phase("lowering");
  const auto cost_model = cost::make_cost_model(cluster.device);              // the platform's operator model
  auto collectives = platform::collective_policy(cluster, plan.world_size()); // algorithm per kind
  const lowering::TaskCount tasks = lowering::count_tasks(model, plan, *cost_model, collectives);
  const FoldDecision fold = decide_fold(options.fold, cluster, plan, tasks.full, options.fold_above_tasks);
  const lowering::LoweringOptions lowering_options = choose_lowering(fold, plan, std::move(collectives), log);
  require_tractable(options, tasks.under(lowering_options));
  require_memory_budget(tasks.under(lowering_options), options.memory_budget,
                        options.workload ? options.workload->string() : config::embedded_default_workload().name);
  const lowering::TaskGraph graph = lowering::lower_iteration(model, plan, *cost_model, lowering_options);
  log.info("lowered to {} tasks and {} dependencies in {}", graph.size(), graph.dependency_count(),
           units::to_string(since(start)));

  progress.phase("platform");
  const auto topology = platform::build_topology(cluster, plan.world_size());
  progress.phase("simulation");
  const auto simulated = Clock::now();
  engine::EngineStats stats;
  engine::EngineOptions engine_options;
  engine_options.log_simgrid = options.verbose;
  engine_options.on_progress = [&progress](const engine::Progress& p) { progress.update(p.done, p.total); };
  const engine::Timeline timeline = engine::simulate(graph, topology, engine_options, &stats);
  progress.finish();
  log.info("simulated {} activities in {}", stats.activities, units::to_string(since(simulated)));

  analysis::Summary summary = analysis::summarize(graph, timeline, model, plan, cluster, memory);
  summary.wall_time = since(start);
  summary.approximations = {fold.fold, fold.reason};

  if (options.json) fileio::write_file_atomically(*options.json, report::json_summary(summary));
  if (options.trace)
    fileio::write_file_atomically(*options.trace,
                                  [&](std::ostream& os) { report::write_chrome_trace(os, graph, timeline); });
  if (options.report)
    fileio::write_file_atomically(*options.report,
                                  [&](std::ostream& os) { report::write_html_report(os, summary, graph, timeline); });
  if (options.dag) write_dag(*options.dag, graph);
  if (!options.quiet) out << report::summary_table(summary);
}

} // namespace twocs::cli
