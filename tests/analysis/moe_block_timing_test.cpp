// A layer's span on a timeline, and the MoE block of one layer (`twocs validate`'s part: moe): the
// span of the router, dispatch, experts, combine and shared experts, not of the attention or the
// layer's norms, on as many replicas as the expert group spans.
#include <doctest/doctest.h>

#include <filesystem>

#include <twocs/analysis/layer_timing.hpp>
#include <twocs/config/scenario_loader.hpp>
#include <twocs/cost/make_cost_model.hpp>
#include <twocs/engine/timeline.hpp>
#include <twocs/lowering/task_graph.hpp>

using namespace twocs;

namespace {

std::filesystem::path source(const char* path) { return std::filesystem::path(TWOCS_SOURCE_DIR) / path; }

} // namespace

TEST_CASE("an MoE block's span lies inside its layer's, on the eight replicas its expert group spans") {
  const auto workload =
      config::parse_workload(config::read_input(source("workloads/validation/moe-perf-mixtral-proxy.yaml")));
  const auto cluster = config::parse_platform(config::read_input(source("platforms/dgx-h100.yaml")));
  const auto cost = cost::make_cost_model(cluster.device);
  auto plan = workload.plan;
  plan.parallelism.data = 1; // time_one_layer chooses the replicas: 8 for EP 8 with t = 1
  const auto layer = analysis::time_one_layer(workload.model, plan, cluster, *cost);
  const auto block = analysis::time_one_layer(workload.model, plan, cluster, *cost, analysis::LayerPart::moe);
  CHECK(block.forward.value() > 0);
  CHECK(block.backward.value() > 0);
  CHECK(block.forward.value() < layer.forward.value());
  CHECK(block.backward.value() < layer.backward.value());
  // The experts' two GEMMs of 8,192 routed rows (4,096 tokens x top-2) by 14,336 by 4,096 take at
  // least their FLOPs at the bf16 peak: a floor the block's forward must exceed.
  const double expert_flops = 2.0 * (2.0 * 8192 * 14336 * 4096);
  CHECK(block.forward.value() > expert_flops / 989e12);
}

TEST_CASE("an MoE block's span does not depend on the head: no replica's gradient reduction runs under it") {
  // moe_perf times a bare MoELayer (no DDP wrapper, no output layer). A four times larger
  // vocabulary makes the head's gradient reduction over the eight replicas four times longer; if
  // it ran under the block's backward it would share the NVLink with the token exchanges and
  // slow the expert GEMMs it overlaps.
  auto workload =
      config::parse_workload(config::read_input(source("workloads/validation/moe-perf-deepseek-proxy.yaml")));
  const auto cluster = config::parse_platform(config::read_input(source("platforms/dgx-h100.yaml")));
  const auto cost = cost::make_cost_model(cluster.device);
  workload.plan.parallelism.expert_dispatcher = model::ExpertDispatcher::deepep;
  const auto small = analysis::time_one_layer(workload.model, workload.plan, cluster, *cost, analysis::LayerPart::moe);
  workload.model.vocab *= 4;
  const auto large = analysis::time_one_layer(workload.model, workload.plan, cluster, *cost, analysis::LayerPart::moe);
  CHECK(large.forward.value() == doctest::Approx(small.forward.value()).epsilon(1e-9));
  CHECK(large.backward.value() == doctest::Approx(small.backward.value()).epsilon(1e-9));
}

TEST_CASE("a layer's span runs from the moment its last device begins it to its last task's end") {
  // Two devices reach layer 0 at 1 ms and 3 ms (the skew of the output layer before it), both
  // end it at 10 ms: the layer took 7 ms, not 9. A task of another layer does not count.
  lowering::TaskGraph graph(2);
  const std::uint32_t label = graph.intern_label("mlp.fc1");
  lowering::Kernel kernel;
  kernel.duration = units::Seconds(1e-3);
  const auto tag = [&](std::int32_t layer, model::Pass pass) {
    lowering::TaskTag t;
    t.layer = layer;
    t.pass = pass;
    t.label = label;
    return t;
  };
  graph.add_kernel(0, tag(0, model::Pass::forward), kernel);  // device 0: 1 .. 6 ms
  graph.add_kernel(0, tag(0, model::Pass::forward), kernel);  //           6 .. 10 ms
  graph.add_kernel(1, tag(0, model::Pass::forward), kernel);  // device 1: 3 .. 10 ms
  graph.add_kernel(1, tag(1, model::Pass::forward), kernel);  // another layer: 0 .. 12 ms
  graph.add_kernel(0, tag(0, model::Pass::backward), kernel); // backward: 20 .. 25 ms
  engine::Timeline timeline;
  const auto ms = [](double t) { return units::Seconds(t * 1e-3); };
  timeline.tasks = {{ms(1), ms(6)}, {ms(6), ms(10)}, {ms(3), ms(10)}, {ms(0), ms(12)}, {ms(20), ms(25)}};
  const auto span = analysis::layer_span(graph, timeline, 0);
  CHECK(span.forward.value() == doctest::Approx(7e-3));
  CHECK(span.backward.value() == doctest::Approx(5e-3)); // one device only: its own span
  const auto none = analysis::layer_span(graph, timeline, 2);
  CHECK(none.forward.value() == 0);
  CHECK(none.backward.value() == 0);
}
