#include <twocs/report/json_summary.hpp>

#include <cmath>
#include <cstdint>

#include <nlohmann/json.hpp>

namespace twocs::report {
namespace {

using Json = nlohmann::ordered_json; // keeps keys in insertion order: the documented order

/// A double as JSON, or null when it is not finite (JSON has no NaN or infinity).
Json number(double value) { return std::isfinite(value) ? Json(value) : Json(nullptr); }

/// A byte count as a JSON integer (rounded to the nearest byte), or null when not finite.
Json byte_count(units::Bytes bytes) {
  const double value = bytes.value();
  if (!std::isfinite(value)) return Json(nullptr);
  return Json(static_cast<std::int64_t>(std::llround(value)));
}

Json per_group(const analysis::PerGroup& seconds) {
  Json out = Json::object();
  for (const auto group : model::all_comm_groups)
    out[std::string(model::to_string(group))] = number(seconds[analysis::index(group)].value());
  return out;
}

/// {"tensor": {"ring": 120}, "data": {"tree": 4, "ring": 2}, ...}: every group, even without collectives.
Json algorithm_counts(const analysis::AlgorithmCounts& counts) {
  Json out = Json::object();
  for (const auto group : model::all_comm_groups) {
    Json per = Json::object();
    for (const auto& [algorithm, n] : counts[analysis::index(group)]) per[algorithm] = n;
    out[std::string(model::to_string(group))] = per;
  }
  return out;
}

Json breakdown(const analysis::Breakdown& b) {
  Json out = Json::object();
  out["compute"] = number(b.compute.value());
  out["exposed_comm"] = number(b.exposed_comm.value());
  out["overlapped_comm"] = number(b.overlapped_comm.value());
  out["idle"] = number(b.idle.value());
  return out;
}

Json stage(const model::StageMemory& s) {
  Json out = Json::object();
  out["stage"] = s.stage;
  out["layers"] = s.layers;
  out["micro_batches_in_flight"] = s.micro_batches_in_flight;
  out["weights_bytes"] = byte_count(s.breakdown.weights);
  out["gradients_bytes"] = byte_count(s.breakdown.gradients);
  out["optimizer_state_bytes"] = byte_count(s.breakdown.optimizer_state);
  out["activations_bytes"] = byte_count(s.breakdown.activations);
  out["communication_buffers_bytes"] = byte_count(s.breakdown.communication_buffers);
  out["total_bytes"] = byte_count(s.breakdown.total());
  return out;
}

/// Steady-state replay (--replay): what ran of the plan's micro-batches and the period repeated.
Json replay(const analysis::Approximations::Replay& r) {
  return {{"replayed", r.replayed},
          {"micro_batches", r.micro_batches},
          {"simulated_micro_batches", r.simulated},
          {"period_micro_batches", r.period},
          {"period_s", number(r.period_time.value())},
          {"reason", r.reason}};
}

Json memory(const analysis::MemorySummary& m) {
  Json out = Json::object();
  out["peak_bytes"] = byte_count(m.peak);
  out["capacity_bytes"] = byte_count(m.capacity);
  out["fits"] = m.fits;
  Json stages = Json::array();
  for (const auto& s : m.report.stages) stages.push_back(stage(s));
  out["stages"] = std::move(stages);
  return out;
}

Json plan(const model::TrainingPlan& p, const analysis::PlanChoice& choice) {
  Json out = Json::object();
  out["tensor"] = p.parallelism.tensor;
  out["pipeline"] = p.parallelism.pipeline;
  out["context"] = p.parallelism.context;
  out["data"] = p.parallelism.data;
  out["virtual_stages"] = p.parallelism.virtual_stages;
  out["sequence"] = p.parallelism.sequence;
  out["micro_batch"] = p.micro_batch;
  out["global_batch"] = p.global_batch;
  out["recompute"] = std::string(model::to_string(p.recompute));
  Json modules = Json::array();
  if (p.recompute == model::Recompute::selective)
    for (const auto name : model::names_of(p.recompute_modules)) modules.push_back(std::string(name));
  out["recompute_modules"] = modules;
  out["recompute_layers"] = model::recomputes_in_blocks(p)
                                ? Json(p.recompute_layers)
                                : Json(nullptr); // training.recompute_layers; null: every layer
  out["pipeline_schedule"] = std::string(model::to_string(p.pipeline_schedule));
  out["search"] = {{"objective", choice.objective},
                   {"considered", choice.considered},
                   {"valid", choice.valid},
                   {"fitting", choice.fitting},
                   {"simulated", choice.simulated}};
  return out;
}

} // namespace

std::string json_summary(const analysis::Summary& summary) {
  Json out = Json::object();
  out["workload"] = summary.workload_name;
  out["platform"] = summary.platform_name;
  out["iteration_time_s"] = number(summary.iteration_time.value());
  out["world_size"] = summary.world_size;
  out["measured_device"] = summary.measured_device;
  out["simulated_devices"] = summary.simulated_devices;
  out["breakdown_s"] = breakdown(summary.breakdown);
  out["exposed_comm_by_kind_s"] = per_group(summary.exposed_comm_by_group);
  out["comm_busy_s"] = number(summary.comm_busy.value());
  out["comm_busy_by_kind_s"] = per_group(summary.comm_busy_by_group);
  out["host_wait_s"] = number(summary.host_wait.value());
  out["overlapped_comm_by_kind_s"] = per_group(summary.overlapped_comm_by_group);
  out["comm_fraction"] = number(summary.comm_fraction);
  out["exposed_comm_fraction"] = number(summary.exposed_comm_fraction);
  out["model_flops"] = number(summary.model_flops.value());
  out["model_flops_per_device_per_s"] = number(summary.model_flops_per_device.value());
  out["mfu"] = number(summary.mfu);
  out["memory"] = memory(summary.memory);
  out["simulated_tasks"] = summary.simulated_tasks;
  out["wall_time_s"] = number(summary.wall_time.value());
  out["collective_algorithms"] = algorithm_counts(summary.collective_algorithms);
  out["approximations"] = {{"folded", summary.approximations.folded},
                           {"reason", summary.approximations.fold_reason},
                           {"collective_lowering", summary.approximations.collective_lowering},
                           {"coarse_collectives", summary.approximations.coarse_collectives},
                           {"replay", replay(summary.approximations.replay)}};
  out["plan"] = plan(summary.plan, summary.plan_choice);
  // Names come from user files: replace invalid UTF-8 instead of throwing halfway through a run.
  return out.dump(2, ' ', false, Json::error_handler_t::replace) + '\n';
}

} // namespace twocs::report
