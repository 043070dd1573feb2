// CUDA graphs (training.host.cuda_graphs; lowering/device_program.hpp, begin_graph): the host
// launches a captured graph once, and the graph's work waits for that launch only. Closed forms
// where the host is the bottleneck (every launch h outlasts the work it launches): K launches of
// units of work D_1 .. D_K take K h + D_K, and the device waits h for the first one and h - D_j
// after each unit j before the last, K h - C + D_K in all, where C is the whole work. Eager
// (none): K = every kernel; partial: a layer's forward and backward are one launch each; full:
// one launch for the forward-backward, then the optimizer's kernels.
#include <doctest/doctest.h>

#include <array>
#include <utility>
#include <variant>

#include <twocs/analysis/breakdown.hpp>
#include <twocs/cost/roofline.hpp>
#include <twocs/lowering/device_program.hpp>
#include <twocs/lowering/lower_iteration.hpp>
#include <twocs/model/layer_ops.hpp>
#include <twocs/model/validate.hpp>

#include "engine/engine_test_support.hpp"
#include "support/scenarios.hpp"

using namespace twocs;
using namespace twocs::engine::test;
using lowering::CollectiveRegistry;
using lowering::DeviceProgram;
using lowering::TaskGraph;
using lowering::TaskId;

namespace {

/// One device launching `layers` layers of `captured` kernels (a graph when `graphs`) then
/// `eager` kernels, each of `d` seconds, at `h` per launch.
engine::Timeline layers_of(TaskGraph& graph, double h, double d, int layers, int captured, int eager, bool graphs) {
  CollectiveRegistry registry(graph);
  DeviceProgram program(graph, registry, 0, units::Seconds(h));
  for (int l = 0; l < layers; ++l) {
    if (graphs) program.begin_graph();
    for (int k = 0; k < captured; ++k) (void)program.compute({}, kernel_of(d));
    if (graphs) program.end_graph();
    for (int k = 0; k < eager; ++k) (void)program.compute({}, kernel_of(d));
  }
  return engine::simulate(graph, make_topology({}));
}

int compute_steps(const model::StepSequence& steps) {
  int n = 0;
  for (const auto& s : steps) n += std::holds_alternative<model::ComputeOp>(s) ? 1 : 0;
  return n;
}

struct HostBoundRun {
  double iteration = 0, host_wait = 0, compute = 0, last_kernel = 0;
  int kernels = 0, optimizer_kernels = 0;
};

/// A tiny dense GPT on one A100 whose host takes `h` per launch, with `graphs`.
HostBoundRun host_bound_run(const model::TransformerConfig& m, model::TrainingPlan plan, double h,
                            model::CudaGraphs graphs) {
  plan.host.launch_time = units::Seconds(h);
  plan.host.synchronize = false; // no optimizer read-backs: the closed forms stay launches only
  plan.host.cuda_graphs = graphs;
  model::validate(m, plan);
  const auto cluster = testing::cluster_of(1, 1);
  const cost::RooflineCostModel cost(cluster.device);
  const TaskGraph graph = lowering::lower_iteration(m, plan, cost);
  const auto timeline = engine::simulate(graph, platform::build_topology(cluster, plan.world_size()));
  HostBoundRun run;
  run.iteration = timeline.makespan.value();
  run.host_wait = analysis::host_wait(graph, timeline, 0).value();
  for (TaskId id = 0; id < graph.size(); ++id) {
    if (!graph.task(id).is_kernel()) continue;
    const double d = graph.kernel(id).duration.value();
    run.compute += d;
    run.last_kernel = d; // program order: the optimizer's last kernel ends the iteration
    ++run.kernels;
    run.optimizer_kernels += graph.task(id).pass == model::Pass::optimizer ? 1 : 0;
  }
  return run;
}

} // namespace

TEST_CASE("a graph is one launch: none, per-layer graphs and one graph follow their closed forms") {
  const double h = 10e-6, d = 2e-6; // the host is the bottleneck: d < h
  const int layers = 3, captured = 4, eager = 2;
  REQUIRE(captured * d <= h); // a graph's kernels finish before the next launch
  TaskGraph none(1), partial(1);
  const double t_none = layers_of(none, h, d, layers, captured, eager, false).makespan.value();
  const auto partial_timeline = layers_of(partial, h, d, layers, captured, eager, true);
  // Eager: every kernel is a launch. Per layer graphs: one launch per graph and per eager kernel.
  CHECK(t_none == doctest::Approx(layers * (captured + eager) * h + d));
  CHECK(partial_timeline.makespan.value() == doctest::Approx(layers * (1 + eager) * h + d));
  const double compute = layers * (captured + eager) * d;
  CHECK(analysis::host_wait(partial, partial_timeline, 0).value() ==
        doctest::Approx(layers * (1 + eager) * h - compute + d));
  // One graph of everything: one launch, then the kernels back to back.
  TaskGraph full(1);
  const auto full_timeline = layers_of(full, h, d, 1, layers * (captured + eager), 0, true);
  CHECK(full_timeline.makespan.value() == doctest::Approx(h + compute));
  CHECK(analysis::host_wait(full, full_timeline, 0).value() == doctest::Approx(h));
}

TEST_CASE("a pause inside a graph launches its work on its own, after the graph's launch") {
  const double h = 10e-6, d = 1e-3;
  TaskGraph graph(1);
  CollectiveRegistry registry(graph);
  DeviceProgram program(graph, registry, 0, units::Seconds(h));
  program.begin_graph();
  (void)program.compute({}, kernel_of(d));
  program.pause_graph();
  const TaskId hook = program.compute({}, kernel_of(d));
  program.resume_graph();
  const TaskId after = program.compute({}, kernel_of(d));
  program.end_graph();
  std::size_t launches = 0;
  for (TaskId id = 0; id < graph.size(); ++id) launches += graph.task(id).is_host() ? 1 : 0;
  CHECK(launches == 2); // the graph's and the hook's
  const auto timeline = engine::simulate(graph, make_topology({}));
  CHECK(start_of(timeline, hook) == doctest::Approx(h + d));
  CHECK(start_of(timeline, after) == doctest::Approx(h + 2 * d));
}

TEST_CASE("a host-bound iteration: none > partial > full, each host wait the closed form of its launches") {
  const auto m = testing::gpt(2, 256, 4, 128, 1024);
  const auto plan = testing::plan_of(1, 1, 1, 2);
  const double h = 5e-3; // above the whole work of this model: the host is the bottleneck
  const auto none = host_bound_run(m, plan, h, model::CudaGraphs::none);
  const auto partial = host_bound_run(m, plan, h, model::CudaGraphs::partial);
  const auto full = host_bound_run(m, plan, h, model::CudaGraphs::full);
  REQUIRE(none.compute < h);
  // Graphs change launches, not the work.
  CHECK(partial.kernels == none.kernels);
  CHECK(full.kernels == none.kernels);
  CHECK(partial.compute == doctest::Approx(none.compute));
  // Launches: eager, every kernel; partial, one per layer pass instead of its kernels (a dense
  // layer is captured whole); full, one for the forward-backward and the optimizer's kernels.
  const auto shape = model::LayerShape::of(m, plan);
  const int forward = compute_steps(model::transformer_layer_forward(shape));
  const int backward = compute_steps(model::transformer_layer_backward(shape));
  const int passes = static_cast<int>(m.layers * plan.micro_batches());
  const int k_none = none.kernels;
  const int k_partial = none.kernels - passes * (forward - 1) - passes * (backward - 1);
  const int k_full = 1 + none.optimizer_kernels;
  const std::array<std::pair<HostBoundRun, int>, 3> cases{{{none, k_none}, {partial, k_partial}, {full, k_full}}};
  for (const auto& c : cases) {
    const HostBoundRun& run = c.first;
    const double launches = c.second;
    CAPTURE(launches);
    // Tight enough to see the last kernel (microseconds) against the launches (about a second).
    CHECK(run.iteration == doctest::Approx(launches * h + run.last_kernel).epsilon(1e-8));
    CHECK(run.host_wait == doctest::Approx(launches * h - run.compute + run.last_kernel).epsilon(1e-8));
  }
  CHECK(none.iteration > partial.iteration);
  CHECK(partial.iteration > full.iteration);
}

TEST_CASE("a MoE layer keeps its dispatch, experts and combine eager: none > partial > full (sync-free)") {
  auto m = testing::gpt(2, 512, 8, 256, 1024);
  m.ffn_kind = model::FfnKind::swiglu;
  m.moe = model::MoeConfig{8, 2, 512, 0, 0, 0, 1.0};
  auto plan = testing::plan_of(1, 1, 2, 2);
  plan.parallelism.expert = 2;
  plan.parallelism.expert_dispatcher = model::ExpertDispatcher::deepep;
  plan.host.launch_time = units::Seconds(200e-6);
  const auto cluster = testing::cluster_of(1, 2);
  const cost::RooflineCostModel cost(cluster.device);
  const auto iteration = [&](model::CudaGraphs graphs, bool sync_free) {
    auto p = plan;
    p.host.cuda_graphs = graphs;
    p.parallelism.sync_free_dispatch = sync_free;
    model::validate(m, p);
    const auto graph = lowering::lower_iteration(m, p, cost);
    return engine::simulate(graph, platform::build_topology(cluster, p.world_size())).makespan.value();
  };
  const double none = iteration(model::CudaGraphs::none, false);
  const double partial = iteration(model::CudaGraphs::partial, false);
  const double partial_sync_free = iteration(model::CudaGraphs::partial, true);
  const double full = iteration(model::CudaGraphs::full, true);
  CHECK(none > partial);
  CHECK(partial > partial_sync_free); // the host no longer loses its lead at each dispatch
  CHECK(partial_sync_free > full);
}
