#include <twocs/analysis/summarize.hpp>

#include <algorithm>
#include <cassert>
#include <vector>

#include <fmt/format.h>

#include <twocs/analysis/breakdown.hpp>
#include <twocs/error.hpp>
#include <twocs/model/flops.hpp>
#include <twocs/model/memory.hpp>
#include <twocs/units/format.hpp>

namespace twocs::analysis {

MemorySummary summarize_memory(const model::TransformerConfig& model, const model::TrainingPlan& plan,
                               const hardware::ClusterSpec& cluster) {
  MemorySummary memory;
  memory.report = model::estimate_memory(model, plan);
  memory.peak = memory.report.peak();
  memory.capacity = cluster.device.memory;
  memory.fits = memory.peak <= memory.capacity;
  return memory;
}

void require_fit(const MemorySummary& memory) {
  if (memory.fits) return;
  std::string table = fmt::format("the plan does not fit in device memory: peak {} per device, capacity {}\n",
                                  units::to_string(memory.peak), units::to_string(memory.capacity));
  table += fmt::format("  {:>5}  {:>6}  {:>9}  {:>11}  {:>11}  {:>11}  {:>11}  {:>11}\n", "stage", "layers",
                       "in flight", "weights", "gradients", "optimizer", "activations", "peak");
  for (const auto& s : memory.report.stages) {
    const auto& b = s.breakdown;
    table += fmt::format("  {:>5}  {:>6}  {:>9}  {:>11}  {:>11}  {:>11}  {:>11}  {:>11}{}\n", s.stage, s.layers,
                         s.micro_batches_in_flight, units::to_string(b.weights), units::to_string(b.gradients),
                         units::to_string(b.optimizer_state), units::to_string(b.activations),
                         units::to_string(b.total()), b.total() > memory.capacity ? "  over" : "");
  }
  table += "  fix: add pipeline or tensor parallelism, shard the optimizer (training.optimizer.sharding), "
           "recompute activations (training.recompute), lower micro_batch, or pass --ignore-memory";
  throw OutOfMemoryError(table);
}

Summary summarize(const lowering::TaskGraph& graph, const engine::Timeline& timeline,
                  const model::TransformerConfig& model, const model::TrainingPlan& plan,
                  const hardware::ClusterSpec& cluster) {
  return summarize(graph, timeline, model, plan, cluster, summarize_memory(model, plan, cluster));
}

namespace {

/// Each collective instance counted once, under its group and the algorithm its transfers carry.
AlgorithmCounts count_algorithms(const lowering::TaskGraph& graph) {
  AlgorithmCounts counts;
  std::vector<bool> seen;
  for (lowering::TaskId id = 0; id < graph.size(); ++id) {
    if (!graph.task(id).is_transfer()) continue;
    const lowering::Transfer& x = graph.transfer(id);
    if (x.collective < 0) continue;
    const auto c = static_cast<std::size_t>(x.collective);
    if (c >= seen.size()) seen.resize(c + 1, false);
    if (seen[c]) continue;
    seen[c] = true;
    ++counts[index(x.group)][std::string(lowering::to_string(x.algorithm))];
  }
  return counts;
}

} // namespace

void derive_rates(Summary& s) {
  const double compute_and_comm = (s.breakdown.compute + s.comm_busy).value();
  s.comm_fraction = compute_and_comm > 0 ? s.comm_busy.value() / compute_and_comm : 0.0;
  s.exposed_comm_fraction = s.iteration_time.value() > 0 ? s.breakdown.exposed_comm / s.iteration_time : 0.0;
  if (s.iteration_time.value() > 0)
    s.model_flops_per_device = s.model_flops / (s.iteration_time * static_cast<double>(s.world_size));
}

Summary summarize(const lowering::TaskGraph& graph, const engine::Timeline& timeline,
                  const model::TransformerConfig& model, const model::TrainingPlan& plan,
                  const hardware::ClusterSpec& cluster, const MemorySummary& memory) {
  assert(timeline.tasks.size() == graph.size());
  Summary s;
  s.workload_name = model.name;
  s.platform_name = cluster.name;
  s.iteration_time = timeline.makespan;
  s.world_size = plan.world_size();
  s.plan = plan;
  s.simulated_tasks = graph.size();
  s.collective_algorithms = count_algorithms(graph);
  const std::vector<bool> running = devices_running_kernels(graph);
  s.simulated_devices = std::count(running.begin(), running.end(), true);
  s.measured_device = last_finishing_device(graph, timeline);
  const DeviceBreakdown d = measure_device(graph, timeline, s.measured_device, s.iteration_time);
  s.breakdown = d.breakdown;
  s.exposed_comm_by_group = d.exposed_by_group;
  s.comm_busy_by_group = d.busy_by_group;
  s.overlapped_comm_by_group = d.overlapped_by_group;
  s.comm_busy = d.comm_busy;
  s.host_wait = host_wait(graph, timeline, s.measured_device);
  s.model_flops = model::model_flops_per_iteration(model, plan);
  derive_rates(s);
  if (s.iteration_time.value() > 0) {
    const auto peak = cluster.device.peak(plan.dtype);
    assert(peak && "validated: the device lists a peak for the training dtype");
    s.mfu = s.model_flops_per_device / *peak;
  }
  s.memory = memory;
  return s;
}

} // namespace twocs::analysis
