// Transformer Engine's delayed scaling reduces the amaxes of a model chunk over the tensor x data
// x context ranks of its stage once after each forward and once after each backward of every
// micro-batch (step_synchronisation.hpp, reduce_fp8_amax); no other recipe or framework does.
#include <doctest/doctest.h>

#include <cstdint>
#include <set>

#include <twocs/cost/roofline.hpp>
#include <twocs/lowering/lower_iteration.hpp>

#include "support/scenarios.hpp"

using namespace twocs;

namespace {

struct Amax {
  std::set<std::int32_t> collectives;
  std::set<lowering::DeviceId> senders;
  std::set<model::Pass> passes;
};

Amax amax_reductions(const model::TrainingPlan& plan) {
  auto device = testing::a100();
  device.peak_flops[model::Dtype::fp8] = units::FlopRate(624e12); // an FP8-capable device
  const cost::RooflineCostModel cost(device);
  const auto graph = lowering::lower_iteration(testing::gpt(2, 512, 8), plan, cost);
  Amax a;
  for (lowering::TaskId id = 0; id < graph.size(); ++id) {
    if (!graph.task(id).is_transfer() || graph.label(graph.task(id).label) != "fp8.amax.all_reduce") continue;
    a.collectives.insert(graph.transfer(id).collective);
    a.senders.insert(graph.task(id).device);
    a.passes.insert(graph.task(id).pass);
  }
  return a;
}

model::TrainingPlan fp8_plan() {
  auto plan = testing::plan_of(2, 2, 2, 3); // t 2, p 2, d 2, 3 micro-batches
  plan.dtype = model::Dtype::fp8;
  return plan;
}

} // namespace

TEST_CASE("fp8 amax: delayed scaling all-reduces each stage's amaxes after every forward and backward of a chunk") {
  const auto a = amax_reductions(fp8_plan());
  // Two stages, each 3 micro-batches x (forward + backward): 12 collectives, over all 8 devices.
  CHECK(a.collectives.size() == 12);
  CHECK(a.senders.size() == 8);
  CHECK(a.passes == std::set<model::Pass>{model::Pass::forward, model::Pass::backward});
}

TEST_CASE("fp8 amax: none in bf16, under current or block scaling, or outside Megatron-LM") {
  auto plan = fp8_plan();
  plan.dtype = model::Dtype::bf16;
  CHECK(amax_reductions(plan).collectives.empty());
  for (const auto recipe : {model::TrainingPlan::Fp8Recipe::tensorwise, model::TrainingPlan::Fp8Recipe::blockwise}) {
    plan = fp8_plan();
    plan.fp8_recipe = recipe;
    CHECK(amax_reductions(plan).collectives.empty());
  }
  plan = fp8_plan();
  plan.framework = model::Framework::megatron_deepspeed;
  CHECK(amax_reductions(plan).collectives.empty());
}
