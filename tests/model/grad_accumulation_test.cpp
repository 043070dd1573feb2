// The gradient accumulation pass per framework (model/grad_accumulation.hpp): bytes per
// parameter counted by hand from each framework's code, and who pays it.
#include <doctest/doctest.h>

#include <variant>

#include <twocs/model/grad_accumulation.hpp>

using namespace twocs::model;

namespace {

TrainingPlan plan_of(Framework framework, Dtype dtype, bool fusion) {
  TrainingPlan plan;
  plan.framework = framework;
  plan.dtype = dtype;
  plan.grad_accumulation_fusion = fusion;
  return plan;
}

} // namespace

TEST_CASE("Megatron-LM with gradient-accumulation fusion has no separate pass") {
  const auto plan = plan_of(Framework::megatron_lm, Dtype::bf16, true);
  CHECK(grad_accumulation_pass(plan).bytes_per_parameter == 0);
  CHECK(grad_accumulation_steps(1'000'000, plan).empty());
}

TEST_CASE("DeepSpeed's BF16 optimizer casts and adds every micro-batch: 18 bytes per parameter") {
  const auto plan = plan_of(Framework::megatron_deepspeed, Dtype::bf16, true); // fusion is Megatron-LM's
  const auto pass = grad_accumulation_pass(plan);
  // cast: read bf16 (2), write fp32 (4); add: read both fp32 (4 + 4), write fp32 (4).
  CHECK(pass.bytes_per_parameter == doctest::Approx(2 + 4 + 4 + 4 + 4));
  CHECK(pass.first_micro_batch);
  const auto steps = grad_accumulation_steps(3'000'000'000, plan);
  REQUIRE(steps.size() == 1);
  const auto& op = std::get<ComputeOp>(steps.front());
  CHECK(op.name == "grad.accumulate");
  CHECK(op.bytes.value() == doctest::Approx(3e9 * 18));
  CHECK(op.model_flops().value() == 0); // not model work: MFU does not count it
}

TEST_CASE("Megatron-LM before the fusion: fp16 autograd adds from the second micro-batch, bf16 into fp32 main grads") {
  const auto fp16 = grad_accumulation_pass(plan_of(Framework::megatron_lm, Dtype::fp16, false));
  CHECK(fp16.bytes_per_parameter == doctest::Approx(3 * 2)); // read both fp16 gradients, write one
  CHECK_FALSE(fp16.first_micro_batch);
  const auto bf16 = grad_accumulation_pass(plan_of(Framework::megatron_lm, Dtype::bf16, false));
  CHECK(bf16.bytes_per_parameter == doctest::Approx(2 + 4 + 4)); // main_grad.add_(grad)
  CHECK(bf16.first_micro_batch);
}

TEST_CASE("fp32 training and FSDP accumulate in place from the second micro-batch") {
  const auto fp32 = grad_accumulation_pass(plan_of(Framework::fsdp, Dtype::fp32, true));
  CHECK(fp32.bytes_per_parameter == doctest::Approx(3 * 4));
  CHECK_FALSE(fp32.first_micro_batch);
  CHECK(grad_accumulation_steps(0, plan_of(Framework::fsdp, Dtype::fp32, true)).empty());
}
