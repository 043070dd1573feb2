#include "columns.hpp"

#include <array>
#include <string_view>

#include <fmt/format.h>

#include <twocs/error.hpp>
#include <twocs/model/parameters.hpp>

namespace twocs::sweep::detail {
namespace {

// The JSON summary's scalar fields (docs/outputs.md), in the order the CSV gives them: every
// scalar but the plan's (the plan columns below), the input names and the approximations' reasons
// (tests/sweep/columns_test.cpp checks that list against a summary).
constexpr std::array<std::string_view, 43> summary_fields = {
    "iteration_time_s",
    "world_size",
    "measured_device",
    "breakdown_s.compute",
    "breakdown_s.exposed_comm",
    "breakdown_s.overlapped_comm",
    "breakdown_s.idle",
    "exposed_comm_by_kind_s.tensor",
    "exposed_comm_by_kind_s.pipeline",
    "exposed_comm_by_kind_s.data",
    "exposed_comm_by_kind_s.expert",
    "exposed_comm_by_kind_s.context",
    "comm_busy_s",
    "comm_busy_by_kind_s.tensor",
    "comm_busy_by_kind_s.pipeline",
    "comm_busy_by_kind_s.data",
    "comm_busy_by_kind_s.expert",
    "comm_busy_by_kind_s.context",
    "overlapped_comm_by_kind_s.tensor",
    "overlapped_comm_by_kind_s.pipeline",
    "overlapped_comm_by_kind_s.data",
    "overlapped_comm_by_kind_s.expert",
    "overlapped_comm_by_kind_s.context",
    "host_wait_s",
    "comm_fraction",
    "exposed_comm_fraction",
    "model_flops",
    "model_flops_per_device_per_s",
    "mfu",
    "memory.peak_bytes",
    "memory.capacity_bytes",
    "memory.fits",
    "simulated_devices",
    "simulated_tasks",
    "wall_time_s",
    "approximations.folded",
    "approximations.collective_lowering",
    "approximations.coarse_collectives",
    "approximations.replay.replayed",
    "approximations.replay.micro_batches",
    "approximations.replay.simulated_micro_batches",
    "approximations.replay.period_micro_batches",
    "approximations.replay.period_s",
};

// The plan and model each scenario ran, read from its inputs by the sweep itself.
// With a plan search (training.parallelism.search), the plan columns are the one it chose, from
// the child's JSON summary; plan.search names the objective.
constexpr std::array<std::string_view, 12> plan_fields = {
    "plan.tensor",         "plan.pipeline",    "plan.context",
    "plan.data",           "plan.micro_batch", "plan.global_batch",
    "plan.virtual_stages", "plan.recompute",   "plan.pipeline_schedule",
    "model.parameters",    "platform.devices", "plan.search"};

std::string json_field(const nlohmann::json& summary, std::string_view dotted) {
  const nlohmann::json* node = &summary;
  std::size_t start = 0;
  while (start <= dotted.size()) {
    const std::size_t dot = std::min(dotted.find('.', start), dotted.size());
    const std::string key(dotted.substr(start, dot - start));
    if (!node->is_object() || !node->contains(key)) return "";
    node = &(*node)[key];
    start = dot + 1;
  }
  if (node->is_string()) return node->get<std::string>();
  return node->is_primitive() && !node->is_null() ? node->dump() : "";
}

std::vector<std::string> plan_values(const config::Study& study, std::size_t index,
                                     const std::optional<nlohmann::json>& summary) {
  try {
    const config::Scenario s = config::load_scenario(study.scenario_sources(index));
    const auto& p = s.workload.plan;
    const auto params = model::count_parameters(s.workload.model, 1).total(s.workload.model.layers);
    if (summary && summary->contains("plan")) // the plan that ran: a plan search's choice
      return {json_field(*summary, "plan.tensor"),
              json_field(*summary, "plan.pipeline"),
              json_field(*summary, "plan.context"),
              json_field(*summary, "plan.data"),
              json_field(*summary, "plan.micro_batch"),
              json_field(*summary, "plan.global_batch"),
              json_field(*summary, "plan.virtual_stages"),
              json_field(*summary, "plan.recompute"),
              json_field(*summary, "plan.pipeline_schedule"),
              fmt::to_string(params),
              fmt::to_string(s.cluster.device_count()),
              json_field(*summary, "plan.search.objective")};
    if (s.workload.search.objective != config::PlanObjective::none) // searched, nothing ran: no plan to name
      return {"",
              "",
              "",
              "",
              "",
              fmt::to_string(p.global_batch),
              "",
              "",
              "",
              fmt::to_string(params),
              fmt::to_string(s.cluster.device_count()),
              std::string(config::to_string(s.workload.search.objective))};
    return {fmt::to_string(p.parallelism.tensor),
            fmt::to_string(p.parallelism.pipeline),
            fmt::to_string(p.parallelism.context),
            fmt::to_string(p.parallelism.data),
            fmt::to_string(p.micro_batch),
            fmt::to_string(p.global_batch),
            fmt::to_string(p.parallelism.virtual_stages),
            std::string(model::to_string(p.recompute)),
            std::string(model::to_string(p.pipeline_schedule)),
            fmt::to_string(params),
            fmt::to_string(s.cluster.device_count()),
            std::string(config::to_string(s.workload.search.objective))};
  } catch (const std::exception&) { // an infeasible scenario: its status and reason say why
    return std::vector<std::string>(plan_fields.size());
  }
}

} // namespace

std::vector<std::string> csv_header(const config::Study& study) {
  std::vector<std::string> header{"scenario"};
  for (const std::string& key : study.axis_keys()) header.push_back(key);
  header.emplace_back("status");
  header.emplace_back("reason");
  for (std::string_view f : summary_fields) header.emplace_back(f);
  for (std::string_view f : plan_fields) header.emplace_back(f);
  header.emplace_back("scenario_wall_time_s");
  return header;
}

std::vector<std::string> csv_row(const config::Study& study, const ScenarioOutcome& outcome) {
  std::vector<std::string> row{fmt::to_string(outcome.index)};
  for (std::string& v : study.scenario_values(outcome.index)) row.push_back(std::move(v));
  row.emplace_back(to_string(outcome.status));
  row.push_back(outcome.reason);
  for (std::string_view f : summary_fields) row.push_back(outcome.summary ? json_field(*outcome.summary, f) : "");
  for (std::string& v : plan_values(study, outcome.index, outcome.summary)) row.push_back(std::move(v));
  row.push_back(fmt::format("{:.3f}", outcome.wall_time_s));
  return row;
}

} // namespace twocs::sweep::detail
