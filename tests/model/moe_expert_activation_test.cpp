// The routed experts' activation and Megatron-Core's weighting of its output by the routing
// probabilities (experts.py, TEGroupedMLP bias_act_func): non-gated experts run it unfused, an
// fp32 product and a cast back each way; gated (SwiGLU) experts weight inside their fused kernel.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include <twocs/model/layer_activations.hpp>
#include <twocs/model/layer_ops.hpp>

#include "support/modern_models.hpp"
#include "support/moe_layer_shape.hpp"
#include "support/step_lookup.hpp"

using namespace twocs::model;

namespace {

using twocs::testing::find_step;
using twocs::testing::step_index;

/// Megatron-LM's moe_perf Mixtral proxy (h 4096, 8 experts of 14,336, top-2, GeLU experts), one
/// expert per rank under EP 8: 4,096 tokens x 2 / 8 experts x 8 ranks = 8,192 rows per expert.
TransformerConfig mixtral_proxy() {
  TransformerConfig m;
  m.layers = 1;
  m.hidden = 4096;
  m.heads = 8;
  m.kv_heads = 8;
  m.ffn_hidden = 14336;
  m.ffn_kind = FfnKind::gelu;
  m.vocab = 32000;
  m.seq_len = 4096;
  m.moe = MoeConfig{};
  m.moe->experts = 8;
  m.moe->top_k = 2;
  m.moe->expert_ffn_hidden = 14336;
  return m;
}

constexpr double elements = 8192.0 * 14336; // rows x expert_ffn_hidden on the rank

} // namespace

TEST_CASE("GeLU experts weight their activation by the fp32 probabilities unfused: a product and a cast") {
  const auto shape = twocs::testing::moe_layer_shape(mixtral_proxy(), 8);
  const auto forward = transformer_layer_forward(shape);
  const auto* gelu = find_step(forward, "moe.experts.gelu");
  const auto* weight = find_step(forward, "moe.experts.probs_weight");
  const auto* cast = find_step(forward, "moe.experts.probs_cast");
  REQUIRE(gelu);
  REQUIRE(weight);
  REQUIRE(cast);
  CHECK(gelu->bytes.value() == doctest::Approx(elements * (2 + 2)));   // read x, write y (bf16)
  CHECK(weight->bytes.value() == doctest::Approx(elements * (2 + 4))); // read y, write y x p in fp32
  CHECK(cast->bytes.value() == doctest::Approx(elements * (4 + 2)));   // read fp32, write bf16
  // fc1, the activation, the product, the cast, then fc2 (which reads the cast's output).
  CHECK(step_index(forward, "moe.experts.fc1") < step_index(forward, "moe.experts.gelu"));
  CHECK(step_index(forward, "moe.experts.gelu") < step_index(forward, "moe.experts.probs_weight"));
  CHECK(step_index(forward, "moe.experts.probs_weight") < step_index(forward, "moe.experts.probs_cast"));
  CHECK(step_index(forward, "moe.experts.probs_cast") < step_index(forward, "moe.experts.fc2"));

  const auto backward = transformer_layer_backward(shape);
  const auto* cast_bwd = find_step(backward, "moe.experts.probs_cast.bwd");
  const auto* weight_bwd = find_step(backward, "moe.experts.probs_weight.bwd");
  REQUIRE(cast_bwd);
  REQUIRE(weight_bwd);
  CHECK(cast_bwd->bytes.value() == doctest::Approx(elements * (2 + 4))); // bf16 gradient to fp32
  // g x p (read g, write fp32), its cast to bf16 (read, write), g x y (read both, write fp32) and
  // the sum over each row (read): four kernels.
  CHECK(weight_bwd->bytes.value() == doctest::Approx(elements * ((4 + 4) + (4 + 2) + (4 + 2 + 4) + 4)));
  CHECK(weight_bwd->kernels == 4);
  CHECK(step_index(backward, "moe.experts.fc2.dgrad") < step_index(backward, "moe.experts.probs_cast.bwd"));
  CHECK(step_index(backward, "moe.experts.probs_cast.bwd") < step_index(backward, "moe.experts.probs_weight.bwd"));
  CHECK(step_index(backward, "moe.experts.probs_weight.bwd") < step_index(backward, "moe.experts.gelu.bwd"));
}

TEST_CASE("SwiGLU experts weight inside their fused kernel: no product or cast of their own") {
  const auto shape = twocs::testing::moe_layer_shape(twocs::testing::qwen3_235b(), 8);
  const auto forward = transformer_layer_forward(shape);
  const auto backward = transformer_layer_backward(shape);
  CHECK(find_step(forward, "moe.experts.swiglu"));
  CHECK_FALSE(find_step(forward, "moe.experts.probs_weight"));
  CHECK_FALSE(find_step(forward, "moe.experts.probs_cast"));
  CHECK_FALSE(find_step(backward, "moe.experts.probs_weight.bwd"));
  CHECK_FALSE(find_step(backward, "moe.experts.probs_cast.bwd"));
}

TEST_CASE("recomputing moe_act re-runs the activation with its weighting, whose product keeps y for backward") {
  const auto m = mixtral_proxy();
  const auto shape = twocs::testing::moe_layer_shape(m, 8);
  RecomputeModules act = no_recompute_modules();
  act.moe_act = true;
  const auto steps = transformer_layer_recompute(shape, Recompute::selective, act);
  std::vector<std::string> names;
  for (const auto& step : steps)
    if (const auto* op = std::get_if<ComputeOp>(&step)) names.push_back(op->name);
  CHECK(names == std::vector<std::string>{"moe.experts.gelu", "moe.experts.probs_weight", "moe.experts.probs_cast"});
  // Activation memory per routed copy (units of s b bytes over h): fc1's input, its output, the
  // product's saved input y and fc2's input, 2 bytes each; a gated model keeps no y.
  const double h = 4096, f = 14336, copies = 2, e = 2;
  const auto kept = layer_activation_units(m, true);
  const auto freed = layer_activation_units(m, true, act);
  CHECK(kept.split - freed.split == doctest::Approx(copies * e * (f + f) / h)); // fc2's input and y
  auto gated = m;
  gated.ffn_kind = FfnKind::swiglu;
  const auto gated_kept = layer_activation_units(gated, true);
  const auto gated_freed = layer_activation_units(gated, true, act);
  CHECK(gated_kept.split - gated_freed.split == doctest::Approx(copies * e * f / h)); // fc2's input only
}
