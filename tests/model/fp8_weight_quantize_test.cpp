// Transformer Engine quantizes a linear layer's 16-bit weight to FP8 (and its transpose) in the
// forward of the step's first micro-batch and caches both for the later ones
// (model::first_micro_batch_forward): one quantization per FP8 GEMM's weight, per expert for
// grouped GEMMs, nothing with FP8 primary weights or outside Transformer Engine.
#include <doctest/doctest.h>

#include <array>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include <twocs/model/fp8_weights.hpp>
#include <twocs/model/layer_ops.hpp>

#include "support/step_lookup.hpp"

#include "../support/moe_layer_shape.hpp"
#include "../support/scenarios.hpp"

using namespace twocs::model;

namespace {

using twocs::testing::find_step;

TrainingPlan fp8_plan(TrainingPlan::Fp8Recipe recipe = TrainingPlan::Fp8Recipe::delayed) {
  auto plan = twocs::testing::plan_of(2, 1, 1, 4);
  plan.attention = AttentionKernel::fused;
  plan.dtype = Dtype::fp8;
  plan.fp8_recipe = recipe;
  return plan;
}

std::vector<const ComputeOp*> quantizations(const StepSequence& steps) {
  std::vector<const ComputeOp*> found;
  for (const auto& step : steps)
    if (const auto* op = std::get_if<ComputeOp>(&step); op && op->name.ends_with(".weight.fp8_quantize"))
      found.push_back(op);
  return found;
}

/// The index of the step named `name`.
std::size_t position(const StepSequence& steps, const std::string& name) {
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (const auto* op = std::get_if<ComputeOp>(&steps[i]); op && op->name == name) return i;
  FAIL("no step " << name);
  return 0;
}

/// torchtitan's Float8 (framework fsdp, tensorwise scaling) on one tensor rank and two replicas.
TrainingPlan torchao_plan() {
  auto plan = fp8_plan(TrainingPlan::Fp8Recipe::tensorwise);
  plan.framework = Framework::fsdp;
  plan.parallelism.tensor = 1;
  plan.parallelism.data = 2;
  plan.global_batch = 8;
  return plan;
}

/// The linear layers of gpt(2, 2048, 16, ...) and their weights (h = 2048, FFN 4h).
constexpr double torchao_h = 2048;
const std::array<const char*, 4> torchao_gemms = {"attn.qkv", "attn.out", "mlp.fc1", "mlp.fc2"};
const std::array<double, 4> torchao_weights = {3 * torchao_h * torchao_h, torchao_h* torchao_h,
                                               4 * torchao_h* torchao_h, 4 * torchao_h* torchao_h};

} // namespace

TEST_CASE("fp8 weights: each dense linear GEMM's weight is quantized once, just before it, reading 2 and writing 1+1 "
          "bytes a weight") {
  const auto model = twocs::testing::gpt(2, 4096, 32, 2048);
  const auto plan = fp8_plan();
  REQUIRE(quantizes_weights_per_step(plan));
  const auto forward = transformer_layer_forward(LayerShape::of(model, plan));
  const auto first = first_micro_batch_forward(forward, plan);
  const auto found = quantizations(first);
  // QKV, the attention output, fc1 and fc2: four weights, each split over t = 2.
  REQUIRE(found.size() == 4);
  CHECK(first.size() == forward.size() + 4);
  const double h = 4096;
  const double weights[] = {3 * h * h / 2, h * h / 2, 4 * h * h / 2, 4 * h * h / 2}; // h x 3h, h x h, h x 4h, 4h x h
  const char* gemms[] = {"attn.qkv", "attn.out", "mlp.fc1", "mlp.fc2"};
  for (int i = 0; i < 4; ++i) {
    CAPTURE(gemms[i]);
    CHECK(found[i]->name == std::string(gemms[i]) + ".weight.fp8_quantize");
    CHECK(found[i]->pass == Pass::forward);
    CHECK(found[i]->kind == OpKind::elementwise);
    CHECK(found[i]->bytes.value() == doctest::Approx(4 * weights[i]).scale(0));
    CHECK(found[i]->kernels == 1);
    // Right before its GEMM.
    CHECK(position(first, found[i]->name) + 1 == position(first, gemms[i]));
  }
}

TEST_CASE("fp8 weights: current scaling reads each weight for its amax first, blockwise quantizes in one kernel") {
  const auto model = twocs::testing::gpt(2, 1024, 8, 1024);
  const auto tensorwise = fp8_plan(TrainingPlan::Fp8Recipe::tensorwise);
  const auto forward = transformer_layer_forward(LayerShape::of(model, tensorwise));
  const auto first = first_micro_batch_forward(forward, tensorwise);
  const auto* amax = find_step(first, "mlp.fc1.weight.fp8_amax");
  const auto* cast = find_step(first, "mlp.fc1.weight.fp8_quantize");
  REQUIRE(amax);
  REQUIRE(cast);
  const double fc1_weights = 1024.0 * 4096 / 2;
  CHECK(amax->bytes.value() == doctest::Approx(2 * fc1_weights).scale(0));
  CHECK(amax->kernels == 2); // zero the amax, read the weight
  CHECK(cast->kernels == 2); // the scale, the cast
  CHECK(position(first, "mlp.fc1.weight.fp8_amax") + 1 == position(first, "mlp.fc1.weight.fp8_quantize"));
  CHECK(first.size() == forward.size() + 8);

  const auto blockwise = fp8_plan(TrainingPlan::Fp8Recipe::blockwise);
  const auto block_first =
      first_micro_batch_forward(transformer_layer_forward(LayerShape::of(model, blockwise)), blockwise);
  CHECK(find_step(block_first, "mlp.fc1.weight.fp8_amax") == nullptr);
  REQUIRE(find_step(block_first, "mlp.fc1.weight.fp8_quantize"));
  CHECK(find_step(block_first, "mlp.fc1.weight.fp8_quantize")->kernels == 1);
}

TEST_CASE("fp8 weights: grouped experts quantize one weight per local expert") {
  auto model = twocs::testing::gpt(2, 2048, 16, 4096);
  model.moe = MoeConfig{.experts = 16, .top_k = 2, .expert_ffn_hidden = 1024};
  auto plan = fp8_plan();
  plan.parallelism.tensor = 1;
  plan.parallelism.data = 4;
  plan.parallelism.expert = 4;
  plan.global_batch = 16;
  auto shape = twocs::testing::moe_layer_shape(model, 4);
  shape.fp8_linear = true;
  const auto first = first_micro_batch_forward(transformer_layer_forward(shape), plan);
  const auto* fc1 = find_step(first, "moe.experts.fc1.weight.fp8_quantize");
  const auto* fc2 = find_step(first, "moe.experts.fc2.weight.fp8_quantize");
  REQUIRE(fc1);
  REQUIRE(fc2);
  // 4 local experts, each with a 2048 x 1024 fc1 (GeLU, not gated) and a 1024 x 2048 fc2.
  CHECK(fc1->kernels == 4);
  CHECK(fc2->kernels == 4);
  CHECK(fc1->bytes.value() == doctest::Approx(4.0 * 4 * 2048 * 1024).scale(0));
  CHECK(fc2->bytes.value() == doctest::Approx(4.0 * 4 * 1024 * 2048).scale(0));
  CHECK(position(first, "moe.experts.fc1.weight.fp8_quantize") < position(first, "moe.experts.fc1"));
}

TEST_CASE("fp8 weights: nothing to quantize with FP8 primary weights, in bf16, or outside Transformer Engine") {
  const auto model = twocs::testing::gpt(2, 1024, 8, 1024);
  auto primary = fp8_plan();
  primary.fp8_params = true;
  auto bf16 = fp8_plan();
  bf16.dtype = Dtype::bf16;
  auto torchao = fp8_plan();
  torchao.framework = Framework::fsdp;
  for (const auto& plan : {primary, bf16, torchao}) {
    CHECK_FALSE(quantizes_weights_per_step(plan));
    const auto forward = transformer_layer_forward(LayerShape::of(model, plan));
    CHECK(quantizations(first_micro_batch_forward(forward, plan)).empty());
    CHECK(first_micro_batch_forward(forward, plan).size() == forward.size());
  }
}

TEST_CASE("float8 weights: torchao casts each weight at every forward and copies it column-major for the dgrad") {
  const auto model = twocs::testing::gpt(2, 2048, 16, 1024);
  auto plan = torchao_plan();
  REQUIRE(casts_weights_every_pass(plan));
  CHECK_FALSE(quantizes_weights_per_step(plan)); // no cache: not Transformer Engine's per-step quantization
  const auto shape = LayerShape::of(model, plan);
  const auto forward = with_float8_weight_casts(transformer_layer_forward(shape), plan);
  const auto backward = with_float8_weight_casts(transformer_layer_backward(shape), plan);
  for (std::size_t i = 0; i < torchao_gemms.size(); ++i) {
    CAPTURE(torchao_gemms[i]);
    const std::string name = torchao_gemms[i];
    const auto* amax = find_step(forward, name + ".weight.fp8_amax");
    const auto* cast = find_step(forward, name + ".weight.fp8_cast");
    const auto* transpose = find_step(backward, name + ".weight.fp8_transpose");
    REQUIRE(amax);
    REQUIRE(cast);
    REQUIRE(transpose);
    CHECK(amax->bytes.value() == doctest::Approx(2 * torchao_weights[i]).scale(0));      // read the weight
    CHECK(cast->bytes.value() == doctest::Approx(3 * torchao_weights[i]).scale(0));      // read it, write FP8
    CHECK(transpose->bytes.value() == doctest::Approx(2 * torchao_weights[i]).scale(0)); // FP8 in and out
    CHECK(position(forward, name + ".weight.fp8_cast") + 1 == position(forward, name));
    CHECK(position(backward, name + ".weight.fp8_transpose") + 1 == position(backward, name + ".dgrad"));
  }
  // A recomputed forward casts again.
  plan.recompute = Recompute::full;
  const auto recompute = with_float8_weight_casts(transformer_layer_recompute(shape, plan.recompute, {}), plan);
  REQUIRE(find_step(recompute, "mlp.fc1.weight.fp8_cast"));
  CHECK(find_step(recompute, "mlp.fc1.weight.fp8_cast")->pass == Pass::recompute);
}

TEST_CASE("float8 weights: with FSDP's float8 all-gather the gathered FP8 weight is not cast again, only copied "
          "column-major for each dgrad") {
  const auto model = twocs::testing::gpt(2, 2048, 16, 1024);
  auto plan = torchao_plan();
  plan.fp8_params = true;
  REQUIRE_FALSE(casts_weights_every_pass(plan));
  REQUIRE(copies_fp8_weights_for_dgrad(plan));
  const auto shape = LayerShape::of(model, plan);
  const auto forward = transformer_layer_forward(shape);
  CHECK(with_float8_weight_casts(forward, plan).size() == forward.size()); // the gather brought FP8
  plan.recompute = Recompute::full;
  const auto recompute = transformer_layer_recompute(shape, plan.recompute, {});
  CHECK(with_float8_weight_casts(recompute, plan).size() == recompute.size());
  const auto plain = transformer_layer_backward(shape);
  const auto backward = with_float8_weight_casts(plain, plan);
  CHECK(backward.size() == plain.size() + 4); // one copy per linear layer's dgrad
  for (std::size_t i = 0; i < torchao_gemms.size(); ++i) {
    CAPTURE(torchao_gemms[i]);
    const std::string name = torchao_gemms[i];
    const auto* transpose = find_step(backward, name + ".weight.fp8_transpose");
    REQUIRE(transpose);
    CHECK(transpose->bytes.value() == doctest::Approx(2 * torchao_weights[i]).scale(0)); // FP8 in and out
    CHECK(position(backward, name + ".weight.fp8_transpose") + 1 == position(backward, name + ".dgrad"));
  }
  // Megatron-LM keeps its FP8 primary weights' transposes with them: no copy.
  plan.framework = Framework::megatron_lm;
  plan.optimizer.sharding = OptimizerSharding::optimizer;
  CHECK_FALSE(copies_fp8_weights_for_dgrad(plan));
}

TEST_CASE("fp8 weights: a GEMM run in chunks under tensor-parallel overlap casts its weight once") {
  const auto model = twocs::testing::gpt(2, 2048, 16, 2048);
  auto te = fp8_plan();
  te.parallelism.sequence = true;
  te.overlap.tp_comm = TpCommOverlap::transformer_engine;
  const auto te_forward = transformer_layer_forward(LayerShape::of(model, te));
  int chunks = 0;
  for (const auto& step : te_forward)
    if (const auto* op = std::get_if<ComputeOp>(&step); op && op->name == "attn.qkv") ++chunks;
  REQUIRE(chunks > 1); // the GEMM runs in chunks beside the all-gather's
  CHECK(quantizations(first_micro_batch_forward(te_forward, te)).size() == 4);

  auto async = te;
  async.framework = Framework::fsdp;
  async.overlap.tp_comm = TpCommOverlap::async_tp;
  const auto async_forward = transformer_layer_forward(LayerShape::of(model, async));
  int casts = 0;
  for (const auto& step : with_float8_weight_casts(async_forward, async))
    if (const auto* op = std::get_if<ComputeOp>(&step); op && op->name.ends_with(".weight.fp8_cast")) ++casts;
  CHECK(casts == 4);
}
