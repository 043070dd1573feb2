// The bubbles of zb-h1 and dualpipe, simulated end to end with uniform stages and free
// communication, against their papers' closed forms computed here from the per-chunk times of a
// forward (F), an input-gradient backward (B) and a weight-gradient backward (W).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <variant>

#include <twocs/analysis/summarize.hpp>
#include <twocs/cost/roofline.hpp>
#include <twocs/engine/simulate.hpp>
#include <twocs/lowering/lower_iteration.hpp>
#include <twocs/lowering/rank_layout.hpp>
#include <twocs/model/layer_ops.hpp>
#include <twocs/platform/topology.hpp>

#include "support/scenarios.hpp"

using namespace twocs;

namespace {

/// Only compute takes time (tests/analysis/pipeline_test.cpp's cluster).
hardware::ClusterSpec free_communication(std::int64_t devices) {
  const units::ByteRate unlimited(1e18);
  auto c = testing::cluster_of(devices, 1, {unlimited, units::Seconds(0), unlimited, units::Seconds(0)});
  c.device.memory_bandwidth = unlimited;
  c.device.roofline.kernel_overhead = units::Seconds(0);
  return c;
}

/// 8 layers per stage and a negligible output layer (vocabulary 128 against hidden 4096; at hidden
/// 1024 its GEMMs put the idle 0.6-1.5% above the closed forms): uniform stages.
model::TransformerConfig uniform_model(std::int64_t p, std::int64_t seq_len) {
  return testing::gpt(8 * p, 4096, 32, seq_len, 128);
}

struct ChunkTimes {
  double forward = 0, input_grad = 0, weight_grad = 0; // F, B, W of one stage's chunk, seconds
};

/// Sums the operator model's kernel times of one stage's layers, a weight-gradient GEMM in W.
ChunkTimes chunk_times(const model::TransformerConfig& m, const model::TrainingPlan& plan,
                       const cost::OperatorCostModel& cost) {
  const auto shape = model::LayerShape::of(m, plan);
  const double layers = static_cast<double>(m.layers / plan.parallelism.pipeline);
  ChunkTimes t;
  for (const auto& step : model::transformer_layer_forward(shape))
    if (const auto* op = std::get_if<model::ComputeOp>(&step)) t.forward += layers * cost.duration(*op).value();
  for (const auto& step : model::transformer_layer_backward(shape))
    if (const auto* op = std::get_if<model::ComputeOp>(&step)) {
      const bool w = op->kind == model::OpKind::gemm && op->grad_params > 0;
      (w ? t.weight_grad : t.input_grad) += layers * cost.duration(*op).value();
    }
  return t;
}

struct Run {
  double iteration = 0, idle = 0;
  ChunkTimes chunk;
};

Run simulate(model::PipelineSchedule schedule, std::int64_t p, std::int64_t m, std::int64_t seq_len = 1024) {
  const auto model = uniform_model(p, seq_len);
  auto plan = testing::plan_of(1, p, 1, m);
  plan.pipeline_schedule = schedule;
  const auto cluster = free_communication(p);
  const cost::RooflineCostModel cost(cluster.device);
  const auto graph = lowering::lower_iteration(model, plan, cost);
  const auto timeline = engine::simulate(graph, platform::build_topology(cluster, p));
  const auto summary = analysis::summarize(graph, timeline, model, plan, cluster);
  return {summary.iteration_time.value(), summary.breakdown.idle.value(), chunk_times(model, plan, cost)};
}

} // namespace

TEST_CASE("zb-h1 idles (p-1)(F+B-W) where 1F1B idles (p-1)(F+B+W)") {
  for (auto [p, m] : {std::pair{2, 4}, std::pair{4, 8}, std::pair{4, 16}}) {
    CAPTURE(p);
    CAPTURE(m);
    const Run zb = simulate(model::PipelineSchedule::zb_h1, p, m);
    const Run base = simulate(model::PipelineSchedule::one_f_one_b, p, m);
    const auto& c = zb.chunk;
    REQUIRE(c.weight_grad <= c.forward); // the closed form's regime: W no longer than F or B
    REQUIRE(c.weight_grad <= c.input_grad);
    const double stages = static_cast<double>(p - 1);
    // Qi et al., ICLR 2024, section 2.1 (ZB-H1): bubble (p - 1)(T_F + T_B - T_W).
    CHECK(zb.idle == doctest::Approx(stages * (c.forward + c.input_grad - c.weight_grad)).epsilon(0.005).scale(0));
    // Narayanan et al. SC'21, section 2.2 (1F1B): bubble (p - 1)(t_f + t_b), t_b = T_B + T_W.
    CHECK(base.idle == doctest::Approx(stages * (c.forward + c.input_grad + c.weight_grad)).epsilon(0.005).scale(0));
    CHECK(zb.iteration < base.iteration);
  }
}

TEST_CASE("zb-h1 is never slower than 1F1B, and with one stage it is 1F1B to the last bit") {
  for (auto [p, m] : {std::pair{1, 4}, std::pair{2, 1}, std::pair{4, 2}, std::pair{4, 4}, std::pair{8, 9}}) {
    CAPTURE(p);
    CAPTURE(m);
    const Run zb = simulate(model::PipelineSchedule::zb_h1, p, m, 256);
    const Run base = simulate(model::PipelineSchedule::one_f_one_b, p, m, 256);
    CHECK(zb.iteration <= base.iteration);
    if (p == 1) CHECK(zb.iteration == base.iteration);
  }
}

TEST_CASE("dualpipe idles (p/2-1)(F&B + B - 3W) with B the whole backward and F&B = F + B here") {
  // deepseek-ai/DualPipe README, "Pipeline Bubbles and Memory Usage": bubble (PP/2 - 1)(F&B + B - 3W).
  // The table's form holds for a forward as long as an input-gradient backward (F = B_input);
  // short sequences make attention, which backward runs twice, negligible. Compute kernels run
  // one at a time, so two overlapped chunks take F + B (only communication hides under them).
  for (auto [p, m] : {std::pair{2, 4}, std::pair{4, 8}, std::pair{4, 12}, std::pair{8, 16}}) {
    CAPTURE(p);
    CAPTURE(m);
    const Run dual = simulate(model::PipelineSchedule::dualpipe, p, m, 128);
    const auto& c = dual.chunk;
    const double backward = c.input_grad + c.weight_grad;
    const double bubble = static_cast<double>(p / 2 - 1) * ((c.forward + backward) + backward - 3 * c.weight_grad);
    CAPTURE(bubble);
    CHECK(std::abs(dual.idle - bubble) <= 0.01 * (bubble + c.forward));
    const Run base = simulate(model::PipelineSchedule::one_f_one_b, p, m, 128);
    CHECK(dual.iteration < base.iteration);
  }
}

TEST_CASE("zb-h1: a stage that defers its W passes reduces weight gradients over data only after its last W starts") {
  auto plan = testing::plan_of(1, 2, 2, 4);
  plan.pipeline_schedule = model::PipelineSchedule::zb_h1;
  plan.overlap.bucket_size = units::Bytes(1e3); // a bucket per weight gradient
  const auto model = testing::gpt(4, 256, 8, 128, 1024);
  const auto cluster = testing::cluster_of(4, 1);
  const cost::RooflineCostModel cost(cluster.device);
  const lowering::TaskGraph g = lowering::lower_iteration(model, plan, cost);
  const auto timeline = engine::simulate(g, platform::build_topology(cluster, 4));
  const lowering::RankLayout layout(plan.parallelism);
  const lowering::DeviceId last_stage = layout.rank({0, 0, 1});
  double last_w_start = 1e30, first_reduction = 1e30;
  for (lowering::TaskId id = 0; id < g.size(); ++id) {
    const auto& t = g.task(id);
    const double start = timeline.tasks[id].start.value();
    // Norm and bias gradients are final in the last B: their small buckets may leave before W.
    if (t.is_transfer() && g.transfer(id).group == model::CommGroup::data && t.device == last_stage &&
        g.transfer(id).bytes.value() > 1e5)
      first_reduction = std::min(first_reduction, start);
    if (t.is_kernel() && t.device == last_stage && t.micro_batch == 3 && g.label_of(id).ends_with(".wgrad"))
      last_w_start = std::min(last_w_start, start);
  }
  REQUIRE(last_w_start < 1e30);
  REQUIRE(first_reduction < 1e30);
  CHECK(first_reduction >= last_w_start);
}
