// FP8 weights: Transformer Engine's cached FP8 copies under FP8 training in Megatron-LM, and FP8
// primary weights (training.fp8_params) held and gathered in FP8.
#include <doctest/doctest.h>

#include <twocs/error.hpp>
#include <twocs/model/fp8_weights.hpp>
#include <twocs/model/memory.hpp>
#include <twocs/model/parameters.hpp>
#include <twocs/model/validate.hpp>

#include "support/scenarios.hpp"

using namespace twocs::model;
using twocs::InputError;

namespace {

constexpr std::int64_t layers = 2;
constexpr double hidden = 1024;

/// One GPT layer's linear weights with f = 4h on one rank: QKV 3h^2 + 3h, projection h^2, fc1
/// 4h^2 + 4h, fc2 4h^2 (the row-parallel biases are replicated, as the norms are).
constexpr double linear_per_layer = 12 * hidden * hidden + 7 * hidden;

TrainingPlan fp8_plan(std::int64_t data, OptimizerSharding sharding) {
  auto plan = twocs::testing::plan_of(1, 1, data, 1);
  plan.dtype = Dtype::fp8;
  plan.optimizer.sharding = sharding;
  return plan;
}

double weights(TrainingPlan plan) {
  const auto m = twocs::testing::gpt(layers, 1024, 16);
  return estimate_memory(m, plan).stages.at(0).breakdown.weights.value();
}

} // namespace

TEST_CASE("linear_range counts the linear layers' weights, not the replicated norms and biases") {
  const auto counts = count_parameters(twocs::testing::gpt(layers, 1024, 16), 1);
  CHECK(static_cast<double>(counts.linear_range(0, layers)) == doctest::Approx(layers * linear_per_layer));
}

TEST_CASE("FP8 training in Megatron-LM caches an FP8 weight and its transpose beside each 16-bit weight") {
  const double linear = layers * linear_per_layer;
  auto plan = fp8_plan(4, OptimizerSharding::optimizer);
  auto bf16 = plan;
  bf16.dtype = Dtype::bf16;
  CHECK(weights(plan) - weights(bf16) == doctest::Approx(2.0 * linear));
  // PyTorch FSDP's float8 linears cast per use and cache nothing.
  plan.framework = Framework::fsdp;
  bf16.framework = Framework::fsdp;
  CHECK(weights(plan) == doctest::Approx(weights(bf16)));
}

TEST_CASE("FP8 primary weights hold the FP8 weight and its transpose, no 16-bit copy") {
  auto plan = fp8_plan(4, OptimizerSharding::optimizer);
  plan.fp8_params = true;
  auto bf16 = plan;
  bf16.dtype = Dtype::bf16;
  bf16.fp8_params = false;
  CHECK(weights(plan) == doctest::Approx(weights(bf16))); // 1 + 1 bytes for 2
  CHECK(resident_linear_weight_bytes(plan) == 2.0);
  CHECK(gathered_linear_weight_bytes(plan) == 1.0);
}

TEST_CASE("under full sharding, FP8 primary weights keep FP8 shards and gather one FP8 layer at a time") {
  constexpr double d = 8;
  const auto m = twocs::testing::gpt(layers, 1024, 16);
  const auto counts = count_parameters(m, 1);
  auto plan = fp8_plan(8, OptimizerSharding::full);
  plan.framework = Framework::fsdp;
  plan.fp8_params = true;
  const double all = static_cast<double>(counts.total(layers));
  const double linear = layers * linear_per_layer;
  CHECK(weights(plan) == doctest::Approx(((all - linear) * 2.0 + linear * 1.0) / d));
  // Three gathered layers in flight under FSDP2 (the running one, the prefetched one, and the
  // all-gather output a copy-out reads: fsdp_memory.hpp): replicated weights in 16 bits, linear
  // ones in FP8.
  const auto b = estimate_memory(m, plan).stages.at(0).breakdown;
  plan.fp8_params = false;
  const auto b16 = estimate_memory(m, plan).stages.at(0).breakdown;
  CHECK(b16.communication_buffers.value() - b.communication_buffers.value() ==
        doctest::Approx(3.0 * linear_per_layer * (2.0 - 1.0)));
}

TEST_CASE("FP8 primary weights are refused where the frameworks refuse them") {
  const auto m = twocs::testing::gpt(layers, 1024, 16);
  auto plan = fp8_plan(4, OptimizerSharding::optimizer);
  plan.fp8_params = true;
  CHECK_NOTHROW(validate(m, plan));
  plan.dtype = Dtype::bf16;
  CHECK_THROWS_WITH_AS(validate(m, plan), doctest::Contains("training.dtype is bf16"), InputError);
  plan.dtype = Dtype::fp8;
  plan.optimizer.sharding = OptimizerSharding::none;
  CHECK_THROWS_WITH_AS(validate(m, plan), doctest::Contains("needs the distributed optimizer"), InputError);
  plan.framework = Framework::megatron_deepspeed;
  CHECK_THROWS_WITH_AS(validate(m, plan), doctest::Contains("Megatron-DeepSpeed has neither"), InputError);
  plan.framework = Framework::fsdp;
  plan.optimizer.sharding = OptimizerSharding::full;
  CHECK_NOTHROW(validate(m, plan));
}
