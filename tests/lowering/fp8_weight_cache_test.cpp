// Transformer Engine quantizes each linear weight to FP8 in the forward of the step's first
// micro-batch and reuses the cached copy for the later ones (model::first_micro_batch_forward;
// DeviceLowering::first_forward): in the lowered iteration every layer of every device
// quantizes its weights once, in its first micro-batch's forward, whatever the schedule, and
// recomputation does not quantize again.
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include <twocs/cost/roofline.hpp>
#include <twocs/lowering/lower_iteration.hpp>

#include "support/scenarios.hpp"

using namespace twocs;

namespace {

/// (device, layer) -> micro-batches and passes of the tasks named *.weight.fp8_quantize, and
/// their count.
struct Quantizations {
  std::map<std::tuple<lowering::DeviceId, std::int32_t>, int> per_layer;
  std::set<std::int32_t> micro_batches;
  std::set<model::Pass> passes;
};

Quantizations quantizations(const model::TrainingPlan& plan, std::int64_t layers = 4) {
  auto device = testing::a100();
  device.peak_flops[model::Dtype::fp8] = units::FlopRate(624e12); // an FP8-capable device
  const cost::RooflineCostModel cost(device);
  const auto graph = lowering::lower_iteration(testing::gpt(layers, 512, 8), plan, cost);
  Quantizations q;
  for (lowering::TaskId id = 0; id < graph.size(); ++id) {
    const auto& task = graph.task(id);
    if (!graph.label(task.label).ends_with(".weight.fp8_quantize")) continue;
    ++q.per_layer[{task.device, task.layer}];
    q.micro_batches.insert(task.micro_batch);
    q.passes.insert(task.pass);
  }
  return q;
}

model::TrainingPlan fp8_plan() {
  auto plan = testing::plan_of(1, 2, 1, 3); // p 2, 3 micro-batches
  plan.dtype = model::Dtype::fp8;
  return plan;
}

} // namespace

TEST_CASE("fp8 weight cache: each layer quantizes its four weights once, in micro-batch 0's forward") {
  const auto q = quantizations(fp8_plan());
  // Two stages of two layers: device 0 holds layers 0 and 1, device 1 layers 2 and 3.
  const std::map<std::tuple<lowering::DeviceId, std::int32_t>, int> expected = {
      {{0, 0}, 4}, {{0, 1}, 4}, {{1, 2}, 4}, {{1, 3}, 4}};
  CHECK(q.per_layer == expected);
  CHECK(q.micro_batches == std::set<std::int32_t>{0});
  CHECK(q.passes == std::set<model::Pass>{model::Pass::forward});
}

TEST_CASE("fp8 weight cache: once per layer under the interleaved schedule and with full recomputation") {
  auto plan = fp8_plan();
  plan.parallelism.virtual_stages = 2;
  plan.pipeline_schedule = model::PipelineSchedule::interleaved_one_f_one_b;
  plan.global_batch = 4; // the interleaved schedule takes a multiple of p micro-batches
  plan.recompute = model::Recompute::full;
  const auto q = quantizations(plan);
  // Chunks of one layer: device 0 runs layers 0 and 2, device 1 layers 1 and 3.
  const std::map<std::tuple<lowering::DeviceId, std::int32_t>, int> expected = {
      {{0, 0}, 4}, {{0, 2}, 4}, {{1, 1}, 4}, {{1, 3}, 4}};
  CHECK(q.per_layer == expected);
  CHECK(q.micro_batches == std::set<std::int32_t>{0});
  CHECK(q.passes == std::set<model::Pass>{model::Pass::forward}); // not in the recomputed forward
}

TEST_CASE("fp8 weight cache: once per layer and device under dualpipe, whose two chunks per rank start at "
          "different micro-batches") {
  auto plan = fp8_plan();
  plan.pipeline_schedule = model::PipelineSchedule::dualpipe;
  plan.global_batch = 8;
  const auto q = quantizations(plan);
  // Each rank holds a stage of each direction's pipeline (DualPipe keeps two copies of the
  // weights): device 0 stage 0 (layers 0, 1) and the reverse direction's stage 0 (layers 2, 3),
  // device 1 the others; every layer once on each.
  std::map<std::tuple<lowering::DeviceId, std::int32_t>, int> expected;
  for (lowering::DeviceId d = 0; d < 2; ++d)
    for (std::int32_t layer = 0; layer < 4; ++layer) expected[{d, layer}] = 4;
  CHECK(q.per_layer == expected);
  CHECK(q.passes == std::set<model::Pass>{model::Pass::forward});
}

TEST_CASE("fp8 weight cache: no quantization with FP8 primary weights or in bf16") {
  auto primary = fp8_plan();
  primary.fp8_params = true;
  CHECK(quantizations(primary).per_layer.empty());
  auto bf16 = fp8_plan();
  bf16.dtype = model::Dtype::bf16;
  CHECK(quantizations(bf16).per_layer.empty());
}
