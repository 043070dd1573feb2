// Saved activations per layer from the layer's shapes (layer_activations.hpp), against
// Korthikanti et al. 2022's 34 s b h for GPT and the tensors counted here by hand for Llama and
// a routed MoE layer.
#include <doctest/doctest.h>

#include <twocs/model/layer_activations.hpp>

#include "support/scenarios.hpp"

using namespace twocs::model;

TEST_CASE("GPT's layer saves Korthikanti's 34 s b h: 10 replicated, 24 split over t, FP8 halves 7") {
  const auto u = layer_activation_units(twocs::testing::gpt(96, 12288, 96));
  CHECK(u.replicated == doctest::Approx(10));
  CHECK(u.split == doctest::Approx(24));
  CHECK(u.fp8_replicated + u.fp8_split == doctest::Approx(7)); // QKV 1, fc1 1, attention output 1, fc2 4
}

TEST_CASE("Llama 3 405B's layer: grouped K/V, SwiGLU, no dropout") {
  auto m = twocs::testing::gpt(126, 16384, 128);
  m.kv_heads = 8;
  m.ffn_hidden = 53248;
  m.ffn_kind = FfnKind::swiglu;
  m.dropout = false;
  const auto u = layer_activation_units(m);
  // Two norm inputs and the QKV and fc1 inputs, 2 bytes each; no masks.
  CHECK(u.replicated == doctest::Approx(8));
  // Q 2, K and V 2 x 2 x 1024 / 16384, attention output 2, fc1 output (gate and up) 2 x 2 x 3.25,
  // fc2 input 2 x 3.25.
  const double f = 53248.0 / 16384;
  CHECK(u.split == doctest::Approx(2 + 4.0 * 1024 / 16384 + 2 + 4 * f + 2 * f));
  CHECK(u.replicated + u.split == doctest::Approx(31.75)); // against GPT's 34
}

TEST_CASE("a routed MoE layer saves each expert input, fc1 output and fc2 input once per copy") {
  auto m = twocs::testing::gpt(94, 4096, 64); // Qwen3-235B-A22B
  m.kv_heads = 4;
  m.head_dim_override = 128;
  m.ffn_hidden = 1536;
  m.ffn_kind = FfnKind::swiglu;
  m.dropout = false;
  m.moe = MoeConfig{.experts = 128, .top_k = 8, .expert_ffn_hidden = 1536};
  const auto u = layer_activation_units(m);
  const double q = 2.0 * 8192 / 4096, kv = 4.0 * 512 / 4096, f = 1536.0 / 4096;
  CHECK(u.replicated == doctest::Approx(8));
  CHECK(u.split == doctest::Approx(q + kv + q + 8 * (2 + 4 * f + 2 * f)));
  // A skewed router: the busiest rank's copies grow with the imbalance.
  m.moe->load_imbalance = 1.5;
  CHECK(layer_activation_units(m).split == doctest::Approx(q + kv + q + 12 * (2 + 4 * f + 2 * f)));
}

TEST_CASE("an MLA layer saves its latents whole and Q, K of nope + rope, V and the output per head") {
  auto m = twocs::testing::gpt(61, 7168, 128); // DeepSeek-V3's attention, a dense SwiGLU MLP
  m.ffn_hidden = 18432;
  m.ffn_kind = FfnKind::swiglu;
  m.dropout = false;
  m.mla = MlaConfig{1536, 512, 128, 64, 128};
  const auto u = layer_activation_units(m);
  const double h = 7168;
  // The two norm inputs and the down-projection and fc1 inputs (2 each),
  // and the q latent (1536) and kv latent with the RoPE key (512 + 64), each before and after its norm.
  CHECK(u.replicated == doctest::Approx(8 + 2 * 2 * (1536 + 512 + 64) / h));
  // Q and K: 128 heads x 192; V and the output: 128 x 128; then gate, up and the fc2 input.
  const double f = 18432 / h;
  CHECK(u.split == doctest::Approx(2 * 2 * 128 * 192 / h + 2 * 2 * 128 * 128 / h + 4 * f + 2 * f));
}
