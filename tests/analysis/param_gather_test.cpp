// training.overlap.param_gather (Megatron-Core --overlap-param-gather): the distributed
// optimizer's weight gather moves from after the step to the first forward of each model chunk,
// the same bytes, gathered layer by layer, and the step no longer ends with it.
#include <doctest/doctest.h>

#include <map>
#include <string_view>

#include <twocs/error.hpp>
#include <twocs/model/validate.hpp>

#include "support/iteration_run.hpp"

using namespace twocs;

namespace {

struct Gathers {
  std::map<lowering::DeviceId, double> bytes; // sent per device
  std::size_t after_step = 0;                 // transfers of the post-optimizer gather
  std::size_t later_micro_batches = 0;        // layer gathers outside micro-batch 0
};

Gathers gathers_of(const lowering::TaskGraph& g) {
  Gathers out;
  for (lowering::TaskId id = 0; id < g.size(); ++id) {
    const auto& t = g.task(id);
    if (!t.is_transfer()) continue;
    const std::string_view label = g.label(t.label);
    if (label == "params.all_gather") ++out.after_step;
    if (label != "params.all_gather" && label != "params.all_gather.layer") continue;
    out.bytes[t.device] += g.transfer(id).bytes.value();
    if (label == "params.all_gather.layer" && t.micro_batch != 0) ++out.later_micro_batches;
  }
  return out;
}

/// 8 layers on 2 stages of 2 chunks, data parallelism 2, the distributed optimizer.
model::TrainingPlan sharded_plan(bool overlap) {
  auto plan = testing::plan_of(1, 2, 2, 4);
  plan.parallelism.virtual_stages = 2;
  plan.pipeline_schedule = model::PipelineSchedule::interleaved_one_f_one_b;
  plan.optimizer.sharding = model::OptimizerSharding::optimizer;
  plan.overlap.param_gather = overlap;
  return plan;
}

} // namespace

TEST_CASE("an overlapped parameter gather moves the same bytes into micro-batch 0's forward and out of the step") {
  const auto m = testing::gpt(8, 512, 8, 256, 1024);
  const auto after = testing::simulate_iteration(m, sharded_plan(false), 4);
  const auto overlapped = testing::simulate_iteration(m, sharded_plan(true), 4);
  const Gathers a = gathers_of(after.graph);
  const Gathers o = gathers_of(overlapped.graph);
  CHECK(a.after_step > 0);
  CHECK(o.after_step == 0);
  CHECK(o.later_micro_batches == 0);
  REQUIRE(a.bytes.size() == o.bytes.size());
  for (const auto& [device, bytes] : a.bytes) CHECK(o.bytes.at(device) == doctest::Approx(bytes));
  // The step no longer waits for the gather: the iteration is no longer.
  CHECK(overlapped.summary.iteration_time.value() <= after.summary.iteration_time.value());
}

TEST_CASE("an overlapped parameter gather needs a sharded optimizer that Megatron-Core runs") {
  const auto m = testing::gpt(8, 512, 8, 256, 1024);
  auto plan = sharded_plan(true);
  plan.optimizer.sharding = model::OptimizerSharding::none;
  CHECK_THROWS_WITH_AS(model::validate(m, plan), doctest::Contains("training.optimizer.sharding is none"), InputError);
  plan.optimizer.sharding = model::OptimizerSharding::full;
  CHECK_THROWS_WITH_AS(model::validate(m, plan), doctest::Contains("sharding is full"), InputError);
  plan.optimizer.sharding = model::OptimizerSharding::optimizer;
  plan.framework = model::Framework::megatron_deepspeed;
  CHECK_THROWS_WITH_AS(model::validate(m, plan), doctest::Contains("training.framework is megatron-deepspeed"),
                       InputError);
}
