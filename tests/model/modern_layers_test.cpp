// Today's dense layers: RMSNorm, rotary embeddings, causal attention, untied embeddings,
// an explicit head dimension, and model FLOPs checked against published per-token numbers.
#include <doctest/doctest.h>

#include <string>
#include <variant>

#include <twocs/error.hpp>
#include <twocs/model/flops.hpp>
#include <twocs/model/layer_ops.hpp>
#include <twocs/model/parameters.hpp>
#include <twocs/model/validate.hpp>

#include "support/modern_models.hpp"
#include "support/scenarios.hpp"
#include "support/step_lookup.hpp"

using namespace twocs::model;

namespace {

using twocs::testing::find_step;
using twocs::testing::llama3_70b;

TrainingPlan one_sequence() {
  TrainingPlan plan;
  plan.global_batch = 1;
  plan.micro_batch = 1;
  return plan;
}

LayerShape shape_of(const TransformerConfig& m, AttentionKernel kernel) {
  LayerShape shape;
  shape.model = m;
  shape.attention = kernel;
  return shape;
}

} // namespace

TEST_CASE("Llama 3 70B model FLOPs per token at s = 8192 match the published 448.8 GFLOP") {
  const auto m = llama3_70b();
  const double l = 80, h = 8192, g = 8, a = 64, d = 128, f = 28672, V = 128256, s = 8192;
  // 6 x (matrix weights) + causal attention 3 x 2 x 2 s h l / 2 (half of the scores masked).
  // Megatron-LM, training.py num_floating_point_operations, with the causal halving of the
  // s / h term; the logits count 6 h V (the vocabulary pads to a multiple of 128 already).
  const double weights = l * (h * h + 2 * h * g * d + h * h + 3 * h * f) + h * V;
  const double per_token = 6 * weights + 6 * s * h * l;
  const double flops = model_flops_per_iteration(m, one_sequence()).value() / s;
  CHECK(flops == doctest::Approx(per_token).epsilon(1e-9));
  CHECK(a * d == h);
  // The published figure (issue 12 cross-check) is 448.8 GFLOP; this accounting gives 449.2.
  CHECK(flops / 1e9 == doctest::Approx(448.8).epsilon(0.002));
}

TEST_CASE("a full (non-causal) mask counts every score, as Narayanan et al.'s formula does") {
  auto m = llama3_70b();
  m.attention_mask = AttentionMask::full;
  const double causal = model_flops_per_iteration(llama3_70b(), one_sequence()).value();
  const double full = model_flops_per_iteration(m, one_sequence()).value();
  const double s = 8192, h = 8192, l = 80;
  CHECK(full - causal == doctest::Approx(6 * s * h * l * s).epsilon(1e-9));
}

TEST_CASE("causal FlashAttention visits half the keys, unfused kernels compute the masked half anyway") {
  auto m = twocs::testing::gpt(1, 1024, 16, 2048);
  auto full = m;
  full.attention_mask = AttentionMask::full;
  const auto causal_steps = transformer_layer_forward(shape_of(m, AttentionKernel::fused));
  const auto full_steps = transformer_layer_forward(shape_of(full, AttentionKernel::fused));
  const auto* causal_flash = find_step(causal_steps, "attn.flash");
  const auto* full_flash = find_step(full_steps, "attn.flash");
  REQUIRE(causal_flash);
  REQUIRE(full_flash);
  CHECK(causal_flash->flops.value() == doctest::Approx(full_flash->flops.value() / 2));
  CHECK(causal_flash->bytes.value() == doctest::Approx(full_flash->bytes.value())); // Q, K, V, O once either way
  const auto unfused_steps = transformer_layer_forward(shape_of(m, AttentionKernel::unfused));
  const auto* scores = find_step(unfused_steps, "attn.scores");
  REQUIRE(scores);
  // 2 b s^2 h FLOPs computed, half of them model FLOPs.
  CHECK(scores->flops.value() == doctest::Approx(2.0 * 2048 * 2048 * 1024));
  CHECK(scores->model_flops().value() == doctest::Approx(2048.0 * 2048 * 1024));
}

TEST_CASE("rotary embeddings add a Q/K kernel per layer and drop the position table") {
  auto m = llama3_70b();
  const LayerShape shape = shape_of(m, AttentionKernel::fused);
  const auto forward = transformer_layer_forward(shape);
  const auto* rope = find_step(forward, "attn.rope");
  REQUIRE(rope);
  // b s (a + g) d elements, read and written once in bf16.
  CHECK(rope->bytes.value() == doctest::Approx(8192.0 * (64 + 8) * 128 * 2 * 2));
  CHECK(find_step(transformer_layer_backward(shape), "attn.rope.bwd"));
  auto learned = m;
  learned.position = PositionKind::learned;
  CHECK_FALSE(find_step(transformer_layer_forward(shape_of(learned, AttentionKernel::fused)), "attn.rope"));
  CHECK(count_parameters(learned, 1).embedding - count_parameters(m, 1).embedding == 8192 * 8192);
}

TEST_CASE("RMSNorm has a scale only, an untied output layer has its own weights") {
  auto m = llama3_70b();
  auto ln = m;
  ln.norm = NormKind::layernorm;
  // Two norms per layer of h parameters fewer, and one final norm.
  CHECK(count_parameters(ln, 1).per_layer - count_parameters(m, 1).per_layer == 2 * 8192);
  CHECK(count_parameters(ln, 1).final_norm - count_parameters(m, 1).final_norm == 8192);
  const auto counts = count_parameters(m, 1);
  CHECK(counts.output == 128256LL * 8192);
  // Llama 3 70B: 70.55B parameters (Dubey et al. 2024); no biases in Llama, so twocs's GPT-style
  // biases add a few million.
  CHECK(static_cast<double>(counts.total(80)) == doctest::Approx(70.55e9).epsilon(0.002));
  auto tied = m;
  tied.tied_embeddings = true;
  CHECK(count_parameters(tied, 1).output == 0);
  // The untied output layer owns its gradient even when the embedding shares its stage.
  const auto head = output_head_backward(shape_of(m, AttentionKernel::fused), false);
  const auto* wgrad = find_step(head, "head.logits.wgrad");
  REQUIRE(wgrad);
  CHECK(wgrad->grad_params == 128256LL * 8192);
}

TEST_CASE("an explicit head_dim widens Q and the attention output (Qwen3: 64 heads x 128 on h = 4096)") {
  TransformerConfig m = twocs::testing::gpt(1, 4096, 64, 4096);
  m.kv_heads = 4;
  m.head_dim_override = 128;
  CHECK(m.attention_width() == 8192);
  CHECK(m.qkv_width() == 8192 + 2 * 4 * 128);
  const auto steps = transformer_layer_forward(shape_of(m, AttentionKernel::fused));
  const auto* out = find_step(steps, "attn.out");
  REQUIRE(out);
  CHECK(out->gemm->k == 8192);
}

TEST_CASE("context parallelism without fused attention and a model of dense layers only are refused") {
  auto m = twocs::testing::gpt(4, 512, 8, 128, 1000);
  TrainingPlan plan;
  plan.global_batch = 8;
  plan.micro_batch = 1;
  plan.parallelism.context = 2;
  plan.attention = AttentionKernel::unfused;
  CHECK_THROWS_AS(validate(m, plan), twocs::InputError);
  plan.parallelism.context = 1;
  m.moe = MoeConfig{8, 2, 256, 0, 4, 0, 1.0}; // every layer dense: no MoE layer left
  CHECK_THROWS_AS(validate(m, plan), twocs::InputError);
  m.moe->dense_layers = 1; // a dense/MoE mix (DeepSeek-V3) is simulated
  CHECK_NOTHROW(validate(m, plan));
  m.moe->dense_layers = 0;
  CHECK_NOTHROW(validate(m, plan));
}
