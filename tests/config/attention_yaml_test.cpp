// training.attention: fused (default since FlashAttention, interface.md "Added for the next round") | unfused, read
// strictly like every other choice.
#include <doctest/doctest.h>

#include <twocs/config/scenario_loader.hpp>

#include "config/input_error_capture.hpp"

using namespace twocs;
using test::where;

TEST_CASE("training.attention defaults to fused and reads unfused") {
  CHECK(config::parse_workload({"w.yaml", test::small_workload}).plan.attention == model::AttentionKernel::fused);
  const auto unfused = config::parse_workload({"w.yaml", test::small_workload + "  attention: unfused\n"});
  CHECK(unfused.plan.attention == model::AttentionKernel::unfused);
  const auto set = config::parse_workload({"w.yaml", test::small_workload}, {"training.attention=unfused"});
  CHECK(set.plan.attention == model::AttentionKernel::unfused);
  CHECK(model::to_string(set.plan.attention) == "unfused");
}

TEST_CASE("a misspelt attention kernel is located and corrected") {
  const auto e = test::workload_error(test::small_workload + "  attention: fuse\n");
  CHECK(where(e) == "w.yaml:14:14");
  CHECK(e.problem() == "training.attention cannot be 'fuse'; allowed values: unfused, fused");
  CHECK(e.fix() == "did you mean 'fused'?");
}

TEST_CASE("training.framework, training.host and training.grad_reduce are read with their defaults") {
  const auto base = config::parse_workload({"w.yaml", test::small_workload});
  CHECK(base.plan.framework == model::Framework::megatron_lm);
  CHECK(base.plan.host.synchronize);
  CHECK(base.plan.host.micro_batch_overhead.value() == 0);
  const auto set = config::parse_workload(
      {"w.yaml", test::small_workload +
                     "  framework: megatron-deepspeed\n  grad_reduce: model\n"
                     "  host: {micro_batch_overhead: 50us, iteration_overhead: 10ms, synchronize: false}\n"});
  CHECK(set.plan.framework == model::Framework::megatron_deepspeed);
  CHECK(model::to_string(set.plan.framework) == "megatron-deepspeed");
  CHECK(set.plan.grad_reduce == model::TrainingPlan::GradReduce::model_dtype);
  CHECK(set.plan.host.micro_batch_overhead.value() == doctest::Approx(50e-6));
  CHECK(set.plan.host.iteration_overhead.value() == doctest::Approx(10e-3));
  CHECK_FALSE(set.plan.host.synchronize);
  const auto e = test::workload_error(test::small_workload + "  framework: deepspeed\n");
  CHECK(e.problem() ==
        "training.framework cannot be 'deepspeed'; allowed values: megatron-lm, megatron-deepspeed, fsdp");
}
