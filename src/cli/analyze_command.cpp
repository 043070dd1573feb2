#include "analyze_command.hpp"

#include <fmt/format.h>

#include <twocs/config/scenario_loader.hpp>
#include <twocs/config/study.hpp>
#include <twocs/cost/make_cost_model.hpp>
#include <twocs/error.hpp>
#include <twocs/fileio/output_file.hpp>
#include <twocs/planning/estimate.hpp>
#include <twocs/planning/plan_search.hpp>
#include <twocs/projection/closed_form.hpp>
#include <twocs/report/results_csv.hpp>
#include <twocs/report/study_analyze.hpp>

namespace twocs::cli {
namespace {

/// The plan to analyse: the workload's, or, with `search: smallest|fastest`, the search's choice
/// by the closed form alone (`fastest` ranks by the estimate and takes the first: analyze never
/// simulates). Writes which plan the search chose to `note`.
model::TrainingPlan analysed_plan(const config::Scenario& s, const cost::OperatorCostModel& cost, std::string& note) {
  const config::Workload& w = s.workload;
  if (w.search.objective == config::PlanObjective::none) return w.plan;
  const bool fastest = w.search.objective == config::PlanObjective::fastest;
  const planning::Simulate closed_form = [&](const model::TrainingPlan& plan,
                                             std::string&) -> std::optional<units::Seconds> {
    return planning::estimate_iteration(projection::project(w.model, plan, s.cluster, cost), plan).time;
  };
  const auto result =
      planning::search_plan(w.model, w.plan, s.cluster, cost,
                            fastest ? planning::Objective::fastest : planning::Objective::smallest, 1, closed_form);
  note = fmt::format("plan search ({}, closed form): {} of {} valid plans fit; chose {}\n",
                     config::to_string(w.search.objective), result.fitting, result.valid,
                     planning::describe(result.chosen.plan));
  return result.chosen.plan;
}

projection::Projection project(const config::Scenario& s, std::string& note) {
  const auto cost = cost::make_cost_model(s.cluster.device);
  return projection::project(s.workload.model, analysed_plan(s, *cost, note), s.cluster, *cost);
}

/// One row per scenario of the study: index, axis values, status, then the projection.
void analyze_study(const AnalyzeOptions& o, std::ostream& out) {
  const config::Study study = config::load_study(*o.study);
  std::vector<std::string> header{"scenario"};
  for (const auto& key : study.axis_keys()) header.push_back(key);
  header.insert(header.end(), {"status", "reason"});
  for (auto& c : report::projection_columns()) header.push_back(std::move(c));
  std::string text = report::csv_record(header);
  std::size_t infeasible = 0;
  for (std::size_t i = 0; i < study.scenario_count(); ++i) {
    std::vector<std::string> row{fmt::to_string(i)};
    for (auto& v : study.scenario_values(i)) row.push_back(std::move(v));
    try {
      std::string note;
      const auto p = project(config::load_scenario(study.scenario_sources(i)), note);
      row.insert(row.end(), {"ok", ""});
      for (auto& v : report::projection_values(p)) row.push_back(std::move(v));
    } catch (const InputError& e) {
      ++infeasible;
      row.insert(row.end(), {"infeasible", e.message().substr(0, e.message().find('\n'))});
      row.resize(header.size());
    }
    text += report::csv_record(row);
  }
  const auto path = o.csv ? *o.csv : std::filesystem::path(study.name + "-analyze.csv");
  fileio::write_file_atomically(path, text);
  out << fmt::format("{} scenarios analysed ({} infeasible); results in {}\n", study.scenario_count(), infeasible,
                     path.string());
}

} // namespace

CLI::App* add_analyze_command(CLI::App& app, AnalyzeOptions& o) {
  auto* a = app.add_subcommand("analyze", "Closed-form compute vs. communication of a plan (no simulation)");
  a->add_option("--workload", o.workload, "Workload YAML; default: the embedded scenario");
  a->add_option("--platform", o.platform, "Platform YAML; default: the embedded DGX A100 cluster");
  a->add_option("--set", o.overrides, "Override any input key by its dotted path")->take_all()->allow_extra_args(false);
  a->add_option("--json", o.json, "Write the analysis as JSON to FILE");
  a->add_option("--csv", o.csv, "Write the analysis as CSV to FILE (with --study: one row per scenario)");
  a->add_option("--study", o.study, "Analyse every scenario of a study file instead of one scenario");
  return a;
}

void run_analyze(const AnalyzeOptions& o, std::ostream& out) {
  if (o.study) return analyze_study(o, out);
  std::string note;
  const auto p = project(config::load_scenario({o.workload, o.platform, o.overrides}), note);
  out << note << report::projection_table(p);
  if (o.json) fileio::write_file_atomically(*o.json, report::projection_json(p));
  if (o.csv)
    fileio::write_file_atomically(*o.csv, report::csv_record(report::projection_columns()) +
                                              report::csv_record(report::projection_values(p)));
}

} // namespace twocs::cli
