// Simulating one row of a validation file through `twocs run`'s own path (simulate_scenario).
#include <cmath>

#include <fmt/format.h>

#include <twocs/analysis/layer_timing.hpp>
#include <twocs/config/scenario_loader.hpp>
#include <twocs/cost/make_cost_model.hpp>
#include <twocs/error.hpp>
#include <twocs/model/megatron_flops.hpp>
#include <twocs/units/format.hpp>

#include "fold_policy.hpp"
#include "run_command.hpp"
#include "validate_command.hpp"

namespace twocs::cli {
namespace {

using config::ValidationKind;
using config::ValidationRun;

config::Scenario load(const ValidationRun& run, const ValidateOptions& options) {
  std::vector<std::string> overrides = run.overrides;
  overrides.insert(overrides.end(), options.overrides.begin(), options.overrides.end());
  try {
    return config::load_scenario({run.workload, run.platform, overrides});
  } catch (InputError& e) {
    config::locate_in_validation_file(e, run); // a bad `set:` entry at its line in the file
    if (!e.location()) e.set_location(run.where);
    throw;
  }
}

std::string plan_text(const model::TrainingPlan& plan) {
  const auto& p = plan.parallelism;
  std::string text = fmt::format("{} ({} x {} x {}", plan.world_size(), p.tensor, p.pipeline, p.data);
  if (p.virtual_stages > 1) text += fmt::format(", v = {}", p.virtual_stages);
  if (p.context > 1) text += fmt::format(", cp = {}", p.context);
  if (p.expert > 1) text += fmt::format(", ep = {}", p.expert);
  return text + ")";
}

/// A row of `kind` before it is measured and simulated.
ValidationRow row_of(std::string name, const ValidationRun& run, std::string plan, ValidationKind kind) {
  ValidationRow row;
  row.name = std::move(name);
  row.citation = run.citation;
  row.plan = std::move(plan);
  row.kind = kind;
  return row;
}

/// The measured iteration time. A throughput converts with the plan: B s / (tokens/s/GPU x n);
/// model TFLOP/s with Megatron-LM's model FLOPs of the global batch: F(B) / (TFLOP/s x n).
units::Seconds measured_iteration(const ValidationRun& run, const config::Scenario& scenario) {
  if (run.iteration_time) return *run.iteration_time;
  const auto& plan = scenario.workload.plan;
  const double gpus = static_cast<double>(plan.world_size());
  if (run.model_tflops_per_gpu) {
    const units::Flops work = model::megatron_model_flops(scenario.workload.model, plan.global_batch);
    return units::Seconds(work.value() / (*run.model_tflops_per_gpu * 1e12 * gpus));
  }
  const double tokens = static_cast<double>(plan.global_batch * scenario.workload.model.seq_len);
  return units::Seconds(tokens / (*run.tokens_per_second_per_gpu * gpus));
}

/// `--fold` on the command line wins over the run's own `fold:` unless it is auto.
FoldMode fold_for(const ValidationRun& run, const ValidateOptions& options) {
  if (options.fold != FoldMode::automatic) return options.fold;
  switch (run.fold) {
  case config::ValidationFold::on: return FoldMode::on;
  case config::ValidationFold::off: return FoldMode::off;
  default: return FoldMode::automatic;
  }
}

/// The options `twocs run` would get for this row: its fold mode and the command's limits. A run
/// that does not fit is simulated anyway and reported in the table (run_validate exits 3 after).
RunOptions run_options_for(const ValidationRun& run, const ValidateOptions& options) {
  RunOptions r;
  r.workload = run.workload;
  r.platform = run.platform;
  r.fold = fold_for(run, options);
  r.fold_above_tasks = options.fold_above_tasks;
  r.max_tasks = options.max_tasks;
  r.ignore_memory = true;
  r.quiet = true;
  return r;
}

/// A logger that drops everything: `twocs run`'s progress lines are not validate's.
spdlog::logger& silent_logger() {
  static spdlog::logger silent("twocs-validate-run");
  return silent;
}

ValidationRow iteration_row(const ValidationRun& run, const ValidateOptions& options, spdlog::logger& log) {
  const config::Scenario scenario = load(run, options);
  const auto& plan = scenario.workload.plan;
  ValidationRow row = row_of(run.name, run, plan_text(plan), ValidationKind::iteration);
  row.measured = measured_iteration(run, scenario);
  SimulatedRun simulated;
  try {
    simulated = simulate_scenario(run_options_for(run, options), scenario, silent_logger());
  } catch (InputError& e) {
    if (!e.location()) e.set_location(run.where); // else the key that caused it (too many tasks)
    throw;
  }
  const auto& memory = simulated.summary.memory;
  row.peak_memory = memory.peak;
  row.capacity = memory.capacity;
  row.fits = memory.fits;
  row.measured_peak_memory = run.peak_memory;
  row.folded = simulated.summary.approximations.folded;
  row.tasks = simulated.graph.size();
  row.predicted = simulated.summary.iteration_time;
  log.info("{}: measured {}, predicted {} ({:+.1f}%)", run.name, units::to_string(row.measured),
           units::to_string(row.predicted), 100 * row.error());
  return row;
}

/// One layer on one tensor-parallel group: forward; recomputation plus backward (or their sum, where
/// the source gives only that).
std::vector<ValidationRow> layer_rows(const ValidationRun& run, const ValidateOptions& options, spdlog::logger& log) {
  const config::Scenario scenario = load(run, options);
  const auto& plan = scenario.workload.plan;
  const auto cost = cost::make_cost_model(scenario.cluster.device);
  const bool moe = run.part == config::ValidationPart::moe;
  if (moe && !scenario.workload.model.moe) {
    InputError error(fmt::format("part: moe times a layer's mixture-of-experts block, and the model of {} has none "
                                 "(model.moe)",
                                 run.workload.filename().string()),
                     "part", "use a workload with model.moe, or remove part: moe to time the whole layer");
    error.set_location(run.where);
    throw error;
  }
  const auto times = analysis::time_one_layer(scenario.workload.model, plan, scenario.cluster, *cost,
                                              moe ? analysis::LayerPart::moe : analysis::LayerPart::layer);
  // The GPUs the MoE block spans: the replicas its expert group needs, with their tensor (and
  // context) ranks.
  const std::int64_t gpus = plan.parallelism.tensor * plan.parallelism.context * analysis::one_layer_replicas(plan);
  const std::string group =
      moe ? fmt::format("{} (t = {}, ep = {}, one MoE block)", gpus, plan.parallelism.tensor, plan.parallelism.expert)
          : fmt::format("{} (t = {}, one layer)", plan.parallelism.tensor, plan.parallelism.tensor);
  if (run.forward_backward) {
    ValidationRow sum_row = row_of(run.name + " forward+backward", run, group, ValidationKind::layer);
    sum_row.measured = *run.forward_backward;
    sum_row.predicted = times.forward + times.backward;
    log.info("{}: forward+backward {:+.1f}%", run.name, 100 * sum_row.error());
    return {sum_row};
  }
  ValidationRow forward_row = row_of(run.name + " forward", run, group, ValidationKind::layer);
  forward_row.measured = run.forward;
  forward_row.predicted = times.forward;
  ValidationRow backward_row = row_of(run.name + " backward", run, group, ValidationKind::layer);
  backward_row.measured = run.backward;
  backward_row.predicted = times.backward;
  log.info("{}: forward {:+.1f}%, backward {:+.1f}%", run.name, 100 * forward_row.error(), 100 * backward_row.error());
  return {forward_row, backward_row};
}

} // namespace

std::vector<ValidationRow> simulate_validation_run(const ValidationRun& run, const ValidateOptions& options,
                                                   spdlog::logger& log) {
  if (run.kind == ValidationKind::layer) return layer_rows(run, options, log);
  return {iteration_row(run, options, log)};
}

namespace {

ErrorStats stats_of(const std::vector<double>& errors) {
  ErrorStats stats;
  for (const double e : errors) {
    stats.mean_abs += std::fabs(e);
    stats.max_abs = std::max(stats.max_abs, std::fabs(e));
  }
  stats.rows = errors.size();
  if (stats.rows > 0) stats.mean_abs /= static_cast<double>(stats.rows);
  return stats;
}

} // namespace

ErrorStats error_stats(const std::vector<ValidationRow>& rows, config::ValidationKind kind) {
  std::vector<double> errors;
  for (const ValidationRow& row : rows)
    if (row.kind == kind) errors.push_back(row.error());
  return stats_of(errors);
}

ErrorStats memory_error_stats(const std::vector<ValidationRow>& rows) {
  std::vector<double> errors;
  for (const ValidationRow& row : rows)
    if (row.measured_peak_memory) errors.push_back(row.memory_error());
  return stats_of(errors);
}

} // namespace twocs::cli
