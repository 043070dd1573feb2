#include <doctest/doctest.h>

#include <map>
#include <set>

#include <twocs/cost/roofline.hpp>
#include <twocs/lowering/lower_iteration.hpp>
#include <twocs/lowering/schedule.hpp>
#include <twocs/model/layer_ops.hpp>
#include <twocs/model/parameters.hpp>

#include "support/scenarios.hpp"

using namespace twocs;
using namespace twocs::lowering;

namespace {

model::TransformerConfig tiny_model(std::int64_t layers = 4) { return testing::gpt(layers, 256, 8, 128, 1024); }

using testing::plan_of;

cost::RooflineCostModel a100() { return cost::RooflineCostModel(testing::a100()); }

std::size_t count_if(const TaskGraph& g, auto&& predicate) {
  std::size_t n = 0;
  for (TaskId id = 0; id < g.size(); ++id) n += predicate(g.task(id)) ? 1 : 0;
  return n;
}

bool is_transfer_in(const TaskGraph& g, TaskId id, model::CommGroup group) {
  return g.task(id).is_transfer() && g.transfer(id).group == group;
}

std::size_t transfers_in(const TaskGraph& g, model::CommGroup group) {
  std::size_t n = 0;
  for (TaskId id = 0; id < g.size(); ++id) n += is_transfer_in(g, id, group) ? 1 : 0;
  return n;
}

} // namespace

TEST_CASE("1F1B: stage i runs p - i - 1 warm-up forwards, then alternates, then drains") {
  auto plan = plan_of(1, 4, 1, 8);
  const auto first = pipeline_schedule(plan, 0);
  REQUIRE(first.size() == 16);
  for (int k = 0; k < 3; ++k) CHECK(first[static_cast<std::size_t>(k)].kind == WorkKind::forward);
  CHECK(first[3].kind == WorkKind::forward);
  CHECK(first[4].kind == WorkKind::backward);
  CHECK(first[4].micro_batch == 0);
  const auto last = pipeline_schedule(plan, 3);
  CHECK(last[0].kind == WorkKind::forward);
  CHECK(last[1].kind == WorkKind::backward);
  plan.pipeline_schedule = model::PipelineSchedule::gpipe;
  const auto gpipe = pipeline_schedule(plan, 2);
  for (int k = 0; k < 8; ++k) CHECK(gpipe[static_cast<std::size_t>(k)].kind == WorkKind::forward);
}

TEST_CASE("every schedule runs each micro-batch's chunk forward once and backward once, backward after forward") {
  for (auto schedule : {model::PipelineSchedule::gpipe, model::PipelineSchedule::one_f_one_b,
                        model::PipelineSchedule::interleaved_one_f_one_b}) {
    auto plan = plan_of(1, 4, 1, 8);
    plan.pipeline_schedule = schedule;
    if (schedule == model::PipelineSchedule::interleaved_one_f_one_b) plan.parallelism.virtual_stages = 2;
    for (std::int64_t stage = 0; stage < 4; ++stage) {
      std::set<std::pair<std::int64_t, std::int64_t>> done_forward, done_backward;
      for (const auto& item : pipeline_schedule(plan, stage)) {
        const auto key = std::pair{item.micro_batch, item.chunk};
        if (item.kind == WorkKind::forward) {
          CHECK(done_forward.insert(key).second);
        } else {
          CHECK(done_forward.count(key) == 1);
          CHECK(done_backward.insert(key).second);
        }
      }
      CHECK(done_forward.size() == static_cast<std::size_t>(8 * plan.parallelism.virtual_stages));
      CHECK(done_backward.size() == done_forward.size());
    }
  }
}

TEST_CASE("a tensor x data parallel iteration: chained kernels, ring all-reduces and gradient buckets") {
  const auto model = tiny_model();
  auto plan = plan_of(2, 1, 2, 3);
  const auto cost = a100();
  const TaskGraph g = lower_iteration(model, plan, cost);
  CHECK(g.device_count() == 4);
  CHECK(g.is_acyclic());
  // Every compute kernel but a device's first waits for the kernel before it on its stream.
  std::map<DeviceId, std::size_t> first_kernels;
  for (TaskId id = 0; id < g.size(); ++id) {
    const Task& t = g.task(id);
    if (t.is_transfer()) continue;
    bool after_kernel = false;
    g.for_each_predecessor(id,
                           [&](TaskId p) { after_kernel |= !g.task(p).is_transfer() && g.task(p).device == t.device; });
    if (!after_kernel) ++first_kernels[t.device];
  }
  for (DeviceId d = 0; d < 4; ++d) CHECK(first_kernels[d] == 1);
  // Tensor parallelism: per micro-batch, 4 all-reduces per layer, 1 for the embedding, 1 for the
  // logits input gradient and 3 small ones in the cross-entropy: 2(t-1) = 2 transfers per rank each.
  const std::size_t tp_collectives = 3 * (4 * model.layers + 1 + 1 + 3);
  // x 2 transfers per rank x 2 ranks x 2 replicas; plus the gradient-norm all-reduce before the optimizer.
  CHECK(transfers_in(g, model::CommGroup::tensor) == (tp_collectives + 1) * 2 * 2 * 2);
  // Data parallelism: each bucket is a 2-device ring all-reduce with 2 transfers per rank per step... all
  // gradient bytes of a device are reduced exactly once.
  double dp_bytes_sent_by_0 = 0;
  for (TaskId id = 0; id < g.size(); ++id)
    if (is_transfer_in(g, id, model::CommGroup::data) && g.task(id).device == 0)
      dp_bytes_sent_by_0 += g.transfer(id).bytes.value();
  // Ring all-reduce over 2 devices: each sends 2 (n-1)/n S = S bytes in total.
  const auto counts = model::count_parameters(model, 2);
  // bf16 gradients are reduced in fp32 (Megatron-LM --bf16 forces accumulate_allreduce_grads_in_fp32).
  const double gradient_bytes = 4.0 * static_cast<double>(counts.total(model.layers));
  CHECK(dp_bytes_sent_by_0 == doctest::Approx(gradient_bytes));
}

TEST_CASE("pipelines of every schedule lower to an acyclic DAG whose collectives all match") {
  for (auto schedule : {model::PipelineSchedule::gpipe, model::PipelineSchedule::one_f_one_b,
                        model::PipelineSchedule::interleaved_one_f_one_b}) {
    CAPTURE(model::to_string(schedule));
    auto plan = plan_of(2, 2, 2, 4);
    plan.pipeline_schedule = schedule;
    if (schedule == model::PipelineSchedule::interleaved_one_f_one_b) plan.parallelism.virtual_stages = 2;
    const auto cost = a100();
    const TaskGraph g = lower_iteration(tiny_model(4), plan, cost);
    CHECK(g.is_acyclic());
    CHECK(transfers_in(g, model::CommGroup::pipeline) > 0);
  }
}

TEST_CASE("recomputation adds the recomputed forward kernels before each layer's backward") {
  const auto model = tiny_model(2);
  auto plan = plan_of(1, 1, 1, 1);
  plan.attention = model::AttentionKernel::unfused; // selective recomputation re-runs its 4 core kernels
  const auto cost = a100();
  const auto kernels = [&](model::Recompute r) {
    plan.recompute = r;
    const TaskGraph g = lower_iteration(model, plan, cost);
    return count_if(g, [](const Task& t) { return t.pass == model::Pass::recompute; });
  };
  CHECK(kernels(model::Recompute::none) == 0);
  CHECK(kernels(model::Recompute::selective) == 2 * 4);
  const auto shape = model::LayerShape::of(model, plan);
  CHECK(kernels(model::Recompute::full) == 2 * model::transformer_layer_forward(shape).size());
}

TEST_CASE("sharded optimizers reduce-scatter gradients, all-gather weights, and ZeRO-3 gathers every layer instead") {
  const auto model = tiny_model(4);
  const auto cost = a100();
  const std::int64_t d = 4;
  const auto counts = model::count_parameters(model, 1);
  const double params = static_cast<double>(counts.total(model.layers));
  const auto bytes_sent_by_0 = [&](model::OptimizerSharding sharding, std::string_view label) {
    auto plan = plan_of(1, 1, d, 2);
    plan.optimizer.sharding = sharding;
    const TaskGraph g = lower_iteration(model, plan, cost);
    CHECK(g.is_acyclic());
    double total = 0;
    for (TaskId id = 0; id < g.size(); ++id) {
      const Task& t = g.task(id);
      if (t.is_transfer() && t.device == 0 && g.label(t.label) == label) total += g.transfer(id).bytes.value();
    }
    return total;
  };
  const double ring = (d - 1.0) / d; // bytes a device sends in a ring reduce-scatter or all-gather, per byte
  // Gradients are reduced in fp32 (bf16 training), weights gathered in bf16.
  CHECK(bytes_sent_by_0(model::OptimizerSharding::none, "grad.all_reduce") == doctest::Approx(2 * ring * 4 * params));
  CHECK(bytes_sent_by_0(model::OptimizerSharding::optimizer, "grad.reduce_scatter") ==
        doctest::Approx(ring * 4 * params));
  CHECK(bytes_sent_by_0(model::OptimizerSharding::optimizer, "params.all_gather") ==
        doctest::Approx(ring * 2 * params));
  CHECK(bytes_sent_by_0(model::OptimizerSharding::optimizer, "params.all_gather.layer") == 0);
  // ZeRO-3: each of 2 micro-batches gathers each of 4 layers twice (forward and backward).
  const double layer_bytes = 2.0 * static_cast<double>(counts.per_layer);
  CHECK(bytes_sent_by_0(model::OptimizerSharding::full, "params.all_gather.layer") ==
        doctest::Approx(2 * 4 * 2 * ring * layer_bytes));
  // ...and keeps the updated weights sharded: no gather of the whole model after the step (FSDP2).
  CHECK(bytes_sent_by_0(model::OptimizerSharding::full, "params.all_gather") == 0);
}
