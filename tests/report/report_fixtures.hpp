// Small hand-made inputs for the report tests: a two-device task graph with its timeline, and a
// summary with round numbers.
#pragma once

#include <twocs/analysis/summary.hpp>
#include <twocs/engine/timeline.hpp>
#include <twocs/lowering/task_graph.hpp>

namespace twocs::testing {

struct TinyRun {
  lowering::TaskGraph graph;
  engine::Timeline timeline;
};

struct TinyTaskSpec {
  lowering::TaskKind kind;
  lowering::Stream stream;
  model::Pass pass;
  lowering::DeviceId device;
  lowering::DeviceId peer;
  std::int32_t layer;
  std::int32_t micro_batch;
  std::int32_t collective;
  std::int32_t step;
  const char* label;
  double duration_s;
  double flops;
  double bytes;
  double start_s;
  double finish_s;
};

inline model::CommGroup group_of(lowering::Stream s) {
  if (s == lowering::Stream::pipeline_comm) return model::CommGroup::pipeline;
  if (s == lowering::Stream::data_comm) return model::CommGroup::data;
  return model::CommGroup::tensor;
}

inline lowering::TaskId add(TinyRun& run, const TinyTaskSpec& s) {
  const lowering::TaskTag tag{s.pass, s.layer, s.micro_batch, run.graph.intern_label(s.label)};
  run.timeline.tasks.push_back({units::seconds(s.start_s), units::seconds(s.finish_s)});
  run.timeline.makespan = units::max(run.timeline.makespan, units::seconds(s.finish_s));
  if (s.kind == lowering::TaskKind::transfer)
    return run.graph.add_transfer(s.device, tag,
                                  {units::bytes(s.bytes), s.peer, s.collective, s.step, group_of(s.stream)});
  const bool model_flops = s.flops > 0 && s.pass != model::Pass::optimizer;
  return run.graph.add_kernel(
      s.device, tag, {units::seconds(s.duration_s), units::flops(s.flops), units::bytes(s.bytes), model_flops});
}

/// Two devices, every stream used once: forward on device 0, a tensor-parallel step, a pipeline
/// send, forward and backward on device 1, a data-parallel gradient transfer back, the optimizer.
inline TinyRun tiny_run() {
  using lowering::Stream;
  using lowering::TaskKind;
  using model::Pass;
  constexpr auto C = TaskKind::compute;
  constexpr auto X = TaskKind::transfer;
  TinyRun run{lowering::TaskGraph(2), {}};
  const auto qkv =
      add(run, {C, Stream::compute, Pass::forward, 0, -1, 0, 0, -1, -1, "attn.qkv", 1e-3, 1e12, 1e8, 0.0, 1e-3});
  const auto tp = add(run, {X, Stream::tensor_comm, Pass::forward, 0, 1, 0, 0, 0, 1, "attn.out.all_reduce", 0, 0,
                            4194304, 1e-3, 1.25e-3});
  const auto pp = add(
      run, {X, Stream::pipeline_comm, Pass::forward, 0, 1, 0, 0, 1, 0, "stage.send", 0, 0, 16777216, 1.25e-3, 1.5e-3});
  const auto fc1 =
      add(run, {C, Stream::compute, Pass::forward, 1, -1, 1, 0, -1, -1, "mlp.fc1", 2e-3, 2e12, 2e8, 1.5e-3, 3.5e-3});
  const auto dgrad = add(
      run, {C, Stream::compute, Pass::backward, 1, -1, 1, 0, -1, -1, "mlp.fc1.dgrad", 2e-3, 2e12, 2e8, 3.5e-3, 5.5e-3});
  const auto ar = add(
      run, {X, Stream::data_comm, Pass::backward, 1, 0, -1, -1, 2, 0, "grad.all_reduce", 0, 0, 8388608, 5.5e-3, 6e-3});
  const auto opt = add(run, {C, Stream::compute, Pass::optimizer, 0, -1, -1, -1, -1, -1, "optimizer.step", 5e-4, 1e9,
                             3e8, 6e-3, 6.5e-3});
  run.graph.add_dependency(qkv, tp);
  run.graph.add_dependency(tp, pp);
  run.graph.add_dependency(pp, fc1);
  run.graph.add_dependency(fc1, dgrad);
  run.graph.add_dependency(dgrad, ar);
  run.graph.add_dependency(ar, opt);
  run.graph.add_dependency(qkv, opt);
  return run;
}

inline model::StageMemory stage_memory(std::int64_t stage, double gib_weights) {
  constexpr double gib = 1073741824.0;
  model::StageMemory s;
  s.stage = stage;
  s.layers = 12;
  s.micro_batches_in_flight = 4 - stage;
  s.breakdown.weights = units::bytes(gib_weights * gib);
  s.breakdown.gradients = units::bytes(gib_weights * gib);
  s.breakdown.optimizer_state = units::bytes(6 * gib_weights * gib);
  s.breakdown.activations = units::bytes(static_cast<double>(4 - stage) * 2.5 * gib);
  s.breakdown.communication_buffers = units::bytes(0.5 * gib);
  return s;
}

/// A summary with round numbers (self-consistent: the parts add up to the iteration time).
inline analysis::Summary tiny_summary() {
  analysis::Summary s;
  s.workload_name = "gpt-tiny";
  s.platform_name = "toy-cluster";
  s.iteration_time = units::seconds(6.5e-3);
  s.world_size = 2;
  s.simulated_devices = 2;
  s.measured_device = 1;
  s.breakdown = {units::seconds(3.5e-3), units::seconds(1e-3), units::seconds(2e-4), units::seconds(2e-3)};
  s.exposed_comm_by_group = {units::seconds(2.5e-4), units::seconds(2.5e-4), units::seconds(5e-4)};
  s.comm_busy_by_group = {units::seconds(2.5e-4), units::seconds(2.5e-4), units::seconds(7e-4)};
  s.comm_busy = units::seconds(1.2e-3);
  s.comm_fraction = 1.2e-3 / (3.5e-3 + 1.2e-3);
  s.exposed_comm_fraction = 1e-3 / 6.5e-3;
  s.model_flops = units::flops(1e12);
  s.model_flops_per_device = s.model_flops / (s.iteration_time * 2.0);
  s.mfu = s.model_flops_per_device / units::flops_per_second(312e12);
  s.memory.report.stages = {stage_memory(0, 2.0), stage_memory(1, 1.5)};
  s.memory.peak = s.memory.report.stages[0].breakdown.total();
  s.memory.capacity = units::bytes(80.0 * 1073741824.0);
  s.memory.fits = true;
  s.simulated_tasks = 1234567;
  s.wall_time = units::seconds(0.25);
  return s;
}

} // namespace twocs::testing
