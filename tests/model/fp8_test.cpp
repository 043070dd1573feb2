// FP8 training as Transformer Engine runs it: FP8 GEMM inputs of the linear layers at the FP8
// peak, casts as memory-bound kernels, BF16 activations and messages, FP8-saved linear inputs.
#include <doctest/doctest.h>

#include <string>
#include <variant>

#include <twocs/model/layer_ops.hpp>
#include <twocs/model/memory.hpp>

#include "support/step_lookup.hpp"

#include "../support/scenarios.hpp"

using namespace twocs::model;

namespace {

using twocs::testing::find_step;

TrainingPlan plan_with(Dtype dtype) {
  auto plan = twocs::testing::plan_of(4, 1, 1, 1, 2);
  plan.parallelism.sequence = true;
  plan.attention = AttentionKernel::fused;
  plan.dtype = dtype;
  return plan;
}

const TransformerConfig& model() {
  static const TransformerConfig m = twocs::testing::gpt(2, 4096, 32, 4096);
  return m;
}

double tensor_bytes(const StepSequence& steps) {
  double b = 0;
  for (const auto& step : steps)
    if (const auto* c = std::get_if<CollectiveOp>(&step); c && c->group == CommGroup::tensor) b += c->size.value();
  return b;
}

int casts(const StepSequence& steps) {
  int n = 0;
  for (const auto& step : steps)
    if (const auto* op = std::get_if<ComputeOp>(&step); op && op->name.find("fp8_cast") != std::string::npos) ++n;
  return n;
}

} // namespace

TEST_CASE("fp8: linear GEMMs read FP8 inputs and write BF16, attention and the output layer stay BF16") {
  const auto shape = LayerShape::of(model(), plan_with(Dtype::fp8));
  CHECK(shape.dtype == Dtype::bf16);
  CHECK(shape.linear_dtype() == Dtype::fp8);
  const auto forward = transformer_layer_forward(shape);
  const auto* fc1 = find_step(forward, "mlp.fc1");
  REQUIRE(fc1);
  CHECK(fc1->dtype == Dtype::fp8);
  // tokens b s = 8192 rows, k = h = 4096, n = 4h / t = 4096: inputs 1 byte, output 2 bytes.
  const double m = 2 * 4096, k = 4096, n = 4096;
  CHECK(fc1->bytes.value() == doctest::Approx(m * k + k * n + 2 * m * n));
  CHECK(find_step(forward, "attn.flash")->dtype == Dtype::bf16);
  CHECK(find_step(output_head_forward(shape), "head.logits")->dtype == Dtype::bf16);
}

TEST_CASE("fp8: tensor-parallel all-gathers carry FP8 shards, reduce-scatters BF16 partial sums") {
  const auto fp8 = LayerShape::of(model(), plan_with(Dtype::fp8));
  const auto bf16 = LayerShape::of(model(), plan_with(Dtype::bf16));
  const double values = 2.0 * 4096 * 4096; // b s h
  // Sequence parallelism: per layer forward 2 all-gathers and 2 reduce-scatters of b s h values.
  CHECK(tensor_bytes(transformer_layer_forward(bf16)) == doctest::Approx(4 * values * 2).scale(0));
  // Transformer Engine casts the shard before it gathers (v1.10 layernorm_linear.py:124-157).
  CHECK(tensor_bytes(transformer_layer_forward(fp8)) == doctest::Approx(2 * values * 1 + 2 * values * 2).scale(0));
  // Backward: the output gradients' and the re-gathered inputs' all-gathers in FP8, dgrad's
  // reduce-scatters in BF16.
  CHECK(tensor_bytes(transformer_layer_backward(bf16)) == doctest::Approx(6 * values * 2).scale(0));
  CHECK(tensor_bytes(transformer_layer_backward(fp8)) == doctest::Approx(4 * values * 1 + 2 * values * 2).scale(0));
}

TEST_CASE("fp8: one cast per FP8 GEMM input that no norm produces: 2 forward, 4 backward per layer") {
  const auto shape = LayerShape::of(model(), plan_with(Dtype::fp8));
  CHECK(casts(transformer_layer_forward(shape)) == 2);   // attention-output and fc2 inputs
  CHECK(casts(transformer_layer_backward(shape)) == 4);  // each linear layer's output gradient
  const auto forward = transformer_layer_forward(shape); // find_step() points into it: keep it alive
  const auto* cast = find_step(forward, "mlp.fc2.fp8_cast");
  REQUIRE(cast);
  // b s f / t = 8192 x 4096 elements, read as BF16 and written as FP8 with its transpose.
  CHECK(cast->bytes.value() == doctest::Approx(8192.0 * 4096 * 4).scale(0));
  CHECK(casts(transformer_layer_forward(LayerShape::of(model(), plan_with(Dtype::bf16)))) == 0);
}

TEST_CASE("fp8: the saved linear-layer inputs halve in memory, FP8 primary weights and optimizer state as bf16") {
  auto fp8_plan = plan_with(Dtype::fp8);
  fp8_plan.fp8_params = true; // FP8 weight + transpose for the 16-bit weight (fp8_weights_test.cpp)
  auto bf16_plan = plan_with(Dtype::bf16);
  const auto fp8 = estimate_memory(model(), fp8_plan).stages[0];
  const auto bf16 = estimate_memory(model(), bf16_plan).stages[0];
  CHECK(fp8.breakdown.weights.value() == doctest::Approx(bf16.breakdown.weights.value()));
  CHECK(fp8.breakdown.optimizer_state.value() == doctest::Approx(bf16.breakdown.optimizer_state.value()));
  // Per layer and micro-batch in flight: 7 s b h / t bytes fewer (QKV, out, fc1 inputs 2 sbh / t
  // each at half size, fc2 input 8 sbh / t at half size).
  const double sbh = 4096.0 * 2 * 4096;
  const double saved = 7 * sbh / 4 * static_cast<double>(fp8.layers * fp8.micro_batches_in_flight);
  CHECK(bf16.breakdown.activations.value() - fp8.breakdown.activations.value() == doctest::Approx(saved));
  CHECK(fp8.breakdown.communication_buffers.value() == doctest::Approx(bf16.breakdown.communication_buffers.value()));
}
