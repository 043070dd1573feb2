#include "run_command.hpp"

#include "memory_budget.hpp"

#include <chrono>

#include <fmt/format.h>

#include <twocs/analysis/summarize.hpp>
#include <twocs/cost/make_cost_model.hpp>
#include <twocs/engine/simulate.hpp>
#include <twocs/error.hpp>
#include <twocs/report/chrome_trace.hpp>
#include <twocs/report/dag_export.hpp>
#include <twocs/report/html_report.hpp>
#include <twocs/report/json_summary.hpp>
#include <twocs/fileio/output_file.hpp>
#include <twocs/config/scenario_loader.hpp>
#include <twocs/report/summary_table.hpp>
#include <twocs/lowering/lower_iteration.hpp>
#include <twocs/lowering/task_count.hpp>
#include <twocs/platform/topology.hpp>
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

lowering::LoweringOptions choose_lowering(const RunOptions& options, const model::TransformerConfig& model,
                                          const model::TrainingPlan& plan, spdlog::logger& log) {
  lowering::LoweringOptions lowering;
  const bool has_replicas = plan.parallelism.tensor * plan.parallelism.data > 1;
  switch (options.fold) {
  case FoldMode::on: lowering.fold_replicas = has_replicas; break;
  case FoldMode::off: break;
  case FoldMode::automatic:
    lowering.fold_replicas = has_replicas && lowering::estimate_task_count(model, plan) > options.fold_above_tasks;
    break;
  }
  if (lowering.fold_replicas)
    log.info("folding replicas: simulating one device per pipeline stage ({} of {}); --fold off simulates all",
             plan.parallelism.pipeline, plan.world_size());
  return lowering;
}

} // namespace

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

  const lowering::LoweringOptions lowering_options = choose_lowering(options, model, plan, log);
  const std::uint64_t expected_tasks = lowering::estimate_task_count(model, plan, lowering_options);
  if (expected_tasks > options.max_tasks) {
    InputError too_large(fmt::format("this plan lowers to about {} tasks, more than the {} twocs simulates by default "
                                     "(about {} of memory)",
                                     expected_tasks, options.max_tasks,
                                     units::to_string(units::Bytes(250.0 * static_cast<double>(expected_tasks)))),
                         "training",
                         "simulate fewer micro-batches (training.global_batch), fold replicas (--fold on), or raise "
                         "the limit with --max-tasks if the machine has the memory");
    too_large.set_location({options.workload ? options.workload->string() : config::embedded_default_workload().name});
    throw too_large;
  }
  require_memory_budget(expected_tasks, options.memory_budget,
                        options.workload ? options.workload->string() : config::embedded_default_workload().name);
  const auto cost_model = cost::make_cost_model(cluster.device); // the platform's operator model
  const lowering::TaskGraph graph = lowering::lower_iteration(model, plan, *cost_model, lowering_options);
  log.info("lowered to {} tasks and {} dependencies in {}", graph.size(), graph.dependency_count(),
           units::to_string(since(start)));

  const auto topology = platform::build_topology(cluster, plan.world_size());
  const auto simulated = Clock::now();
  engine::EngineStats stats;
  const engine::Timeline timeline = engine::simulate(graph, topology, {options.verbose}, &stats);
  log.info("simulated {} activities in {}", stats.activities, units::to_string(since(simulated)));

  analysis::Summary summary = analysis::summarize(graph, timeline, model, plan, cluster);
  summary.wall_time = since(start);

  if (options.json) fileio::write_file_atomically(*options.json, report::json_summary(summary));
  if (options.trace)
    fileio::write_file_atomically(*options.trace, [&](std::ostream& os) { report::write_chrome_trace(os, graph, timeline); });
  if (options.report)
    fileio::write_file_atomically(*options.report,
                              [&](std::ostream& os) { report::write_html_report(os, summary, graph, timeline); });
  if (options.dag) write_dag(*options.dag, graph);
  if (!options.quiet) out << report::summary_table(summary);
}

} // namespace twocs::cli
