// FP8 quantization by recipe: delayed scaling's single cast (none after LayerNormLinear's norm),
// current scaling's amax pass, bookkeeping kernels, norm-produced casts and the amax all-reduce
// over the tensor-parallel group under sequence parallelism.
#include <doctest/doctest.h>

#include <string>
#include <variant>

#include <twocs/model/layer_ops.hpp>

#include "support/step_lookup.hpp"

#include "../support/scenarios.hpp"

using namespace twocs::model;

namespace {

using twocs::testing::find_collective;
using twocs::testing::find_step;
using twocs::testing::step_index;
using twocs::testing::step_name;

LayerShape fp8_shape(TrainingPlan::Fp8Recipe recipe, std::int64_t tensor, bool sequence) {
  auto plan = twocs::testing::plan_of(tensor, 1, 1, 1, 2);
  plan.parallelism.sequence = sequence;
  plan.attention = AttentionKernel::fused;
  plan.dtype = Dtype::fp8;
  plan.fp8_recipe = recipe;
  return LayerShape::of(twocs::testing::gpt(2, 4096, 32, 4096), plan);
}

int count_named(const StepSequence& steps, const std::string& part) {
  int n = 0;
  for (const auto& step : steps)
    if (step_name(step).find(part) != std::string::npos) ++n;
  return n;
}

// b s = 2 x 4096 tokens, h = 4096.
constexpr double tokens = 2.0 * 4096;
constexpr double hidden = 4096;

} // namespace

TEST_CASE("fp8 quantize: delayed scaling casts once, with no amax pass and no cast after the norm") {
  const auto shape = fp8_shape(TrainingPlan::Fp8Recipe::delayed, 1, false);
  const auto forward = transformer_layer_forward(shape);
  CHECK(count_named(forward, "fp8_amax") == 0);
  CHECK_FALSE(find_step(forward, "attn.qkv.fp8_cast"));
  CHECK_FALSE(find_step(forward, "mlp.fc1.fp8_cast"));
  const auto* cast = find_step(forward, "attn.out.fp8_cast");
  REQUIRE(cast);
  CHECK(cast->kernels == 1);
  CHECK(cast->bytes.value() == doctest::Approx(tokens * hidden * 4).scale(0)); // read 2, write 1 + its transpose 1
  CHECK(count_named(transformer_layer_backward(shape), "fp8_amax") == 0);
}

TEST_CASE("fp8 quantize: current scaling reads a standalone input twice, amax then cast") {
  const auto forward = transformer_layer_forward(fp8_shape(TrainingPlan::Fp8Recipe::tensorwise, 1, false));
  const auto* amax = find_step(forward, "attn.out.fp8_amax");
  const auto* cast = find_step(forward, "attn.out.fp8_cast");
  REQUIRE(amax);
  REQUIRE(cast);
  CHECK(step_index(forward, "attn.out.fp8_amax") + 1 == step_index(forward, "attn.out.fp8_cast"));
  CHECK(amax->bytes.value() == doctest::Approx(tokens * hidden * 2));          // the amax reads the tensor
  CHECK(amax->kernels == 2);                                                   // and zeroes it first
  CHECK(cast->bytes.value() == doctest::Approx(tokens * hidden * 4).scale(0)); // and the transpose wgrad reads
  CHECK(cast->kernels == 2);                                                   // the scale from the amax, then the cast
  CHECK(amax->host_launches == doctest::Approx(1.55));
  CHECK(find_step(forward, "mlp.fc2.fp8_amax"));
}

TEST_CASE("fp8 quantize: under current scaling the norm writes BF16 and its amax, and a cast follows") {
  const auto forward = transformer_layer_forward(fp8_shape(TrainingPlan::Fp8Recipe::tensorwise, 1, false));
  for (const char* name : {"attn.qkv", "mlp.fc1"}) {
    CAPTURE(name);
    const auto* cast = find_step(forward, std::string(name) + ".fp8_cast");
    REQUIRE(cast);
    CHECK(cast->kernels == 3); // the amax zeroed before the norm, the scale, the cast
    CHECK(cast->bytes.value() == doctest::Approx(tokens * hidden * 4).scale(0)); // with the transpose
    CHECK_FALSE(find_step(forward, std::string(name) + ".fp8_amax"));            // the norm computed it
  }
  CHECK(step_index(forward, "attn.norm") + 1 == step_index(forward, "attn.qkv.fp8_cast"));
}

TEST_CASE("fp8 quantize: under sequence parallelism the column inputs and row output gradients reduce their amax") {
  const auto shape = fp8_shape(TrainingPlan::Fp8Recipe::tensorwise, 4, true);
  const auto forward = transformer_layer_forward(shape);
  const auto backward = transformer_layer_backward(shape);
  for (const char* name : {"attn.qkv.fp8_amax.all_reduce", "mlp.fc1.fp8_amax.all_reduce"}) {
    CAPTURE(name);
    const auto* reduce = find_collective(forward, name);
    REQUIRE(reduce);
    CHECK(reduce->kind == Collective::all_reduce);
    CHECK(reduce->group == CommGroup::tensor);
    CHECK(reduce->size.value() == doctest::Approx(4.0)); // one fp32 amax
    CHECK(reduce->overlapped_ops == 0);                  // the scale waits for it
  }
  CHECK(find_collective(backward, "attn.out.grad.fp8_amax.all_reduce"));
  CHECK(find_collective(backward, "mlp.fc2.grad.fp8_amax.all_reduce"));
  // Row-parallel inputs and column-parallel output gradients are quantized locally.
  CHECK_FALSE(find_collective(forward, "attn.out.fp8_amax.all_reduce"));
  CHECK_FALSE(find_collective(backward, "mlp.fc1.grad.fp8_amax.all_reduce"));
  CHECK(count_named(forward, "fp8_amax.all_reduce") == 2);
  CHECK(count_named(backward, "fp8_amax.all_reduce") == 2);
  // The norm's output is the rank's b s h / t shard, cast row-wise before its FP8 gather.
  CHECK(find_step(forward, "attn.qkv.fp8_cast")->bytes.value() == doctest::Approx(tokens * hidden / 4 * 3).scale(0));
  // Without sequence parallelism every rank holds the whole tensor: nothing to reduce.
  const auto whole = fp8_shape(TrainingPlan::Fp8Recipe::tensorwise, 4, false);
  CHECK(count_named(transformer_layer_forward(whole), "fp8_amax.all_reduce") == 0);
  CHECK(count_named(transformer_layer_backward(whole), "fp8_amax.all_reduce") == 0);
}

TEST_CASE("fp8 quantize: Transformer Engine makes the weight gradient's transpose apart from the cast after an FP8 "
          "gather and after a norm that writes FP8") {
  // Delayed scaling: LayerNormLinear's norm writes the FP8 input row-wise; its backward
  // transposes it for wgrad (layernorm_linear.py:570 at v1.10), read 1 and write 1 byte.
  const auto delayed = transformer_layer_backward(fp8_shape(TrainingPlan::Fp8Recipe::delayed, 1, false));
  for (const char* name : {"attn.qkv", "mlp.fc1"}) {
    CAPTURE(name);
    const auto* transpose = find_step(delayed, std::string(name) + ".fp8_transpose");
    REQUIRE(transpose);
    CHECK(transpose->bytes.value() == doctest::Approx(tokens * hidden * 2).scale(0));
    CHECK(step_index(delayed, std::string(name) + ".fp8_transpose") + 1 ==
          step_index(delayed, std::string(name) + ".wgrad"));
  }
  // Current scaling casts after the norm and writes the transpose in the cast: no second pass.
  const auto current = transformer_layer_backward(fp8_shape(TrainingPlan::Fp8Recipe::tensorwise, 1, false));
  CHECK(count_named(current, "fp8_transpose") == 0);
}

TEST_CASE("fp8 quantize: a tensor Transformer Engine all-gathers in FP8 is cast row-wise on its shard and transposed "
          "after the gather") {
  auto plan = twocs::testing::plan_of(4, 1, 1, 1, 2);
  plan.parallelism.sequence = true;
  plan.attention = AttentionKernel::fused;
  plan.dtype = Dtype::fp8;
  plan.fp8_recipe = TrainingPlan::Fp8Recipe::tensorwise;
  plan.overlap.tp_comm = TpCommOverlap::transformer_engine; // userbuffers gather the FP8 shards
  const auto shape = LayerShape::of(twocs::testing::gpt(2, 4096, 32, 4096), plan);
  const auto forward = transformer_layer_forward(shape);
  const auto backward = transformer_layer_backward(shape);
  // The column-parallel inputs: the shard cast row-wise (read 2, write 1), the gathered input
  // transposed for wgrad in the backward (read 1, write 1).
  for (const char* name : {"attn.qkv", "mlp.fc1"}) {
    CAPTURE(name);
    CHECK(find_step(forward, std::string(name) + ".fp8_cast")->bytes.value() ==
          doctest::Approx(tokens * hidden / 4 * 3).scale(0));
    const auto* transpose = find_step(backward, std::string(name) + ".fp8_transpose");
    REQUIRE(transpose);
    CHECK(transpose->bytes.value() == doctest::Approx(tokens * hidden * 2).scale(0));
  }
  // The row-parallel output gradients likewise.
  for (const char* name : {"attn.out", "mlp.fc2"}) {
    CAPTURE(name);
    CHECK(find_step(backward, std::string(name) + ".grad.fp8_cast")->bytes.value() ==
          doctest::Approx(tokens * hidden / 4 * 3).scale(0));
    CHECK(find_step(backward, std::string(name) + ".grad.fp8_transpose")->bytes.value() ==
          doctest::Approx(tokens * hidden * 2).scale(0));
  }
  // The local tensors are cast with their transpose: the row-parallel inputs, the
  // column-parallel output gradients.
  CHECK(find_step(forward, "attn.out.fp8_cast")->bytes.value() ==
        doctest::Approx(tokens * hidden / 4 * 4).scale(0)); // b s (a d / t), a d = h
  CHECK(find_step(backward, "attn.qkv.grad.fp8_cast")->bytes.value() ==
        doctest::Approx(tokens * 3 * hidden / 4 * 4).scale(0)); // q, k and v: 3 h / t columns
}
