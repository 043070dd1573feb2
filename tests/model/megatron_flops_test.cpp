// Megatron-LM's model-FLOP formula (the one behind published "model TFLOP/s per GPU"), checked
// against the per-token figures its users publish and against Narayanan et al.'s closed form.
#include <doctest/doctest.h>

#include <twocs/model/megatron_flops.hpp>

#include "support/modern_models.hpp"
#include "support/scenarios.hpp"

using namespace twocs;

TEST_CASE("Megatron's model FLOPs of a GPT equal 72 B s l h^2 (1 + s/12h + V/12lh) (SC'21 Eq. 3, causal)") {
  // SC'21 Eq. 3 without recomputation has s/6h; Megatron-LM now halves the attention score term
  // for the causal mask, which turns it into s/12h. V = 51200 is a multiple of 128 (no padding).
  const auto m = testing::gpt(96, 12288, 96, 2048, 51200);
  const double B = 8, s = 2048, l = 96, h = 12288, V = 51200;
  const double expected = 72 * B * s * l * h * h * (1 + s / (12 * h) + V / (12 * l * h));
  CHECK(model::megatron_model_flops(m, 8).value() == doctest::Approx(expected).epsilon(1e-12));
}

TEST_CASE("Llama 3 70B at s = 8192: 448.8 GFLOP per token (issue 12's cross-check)") {
  const auto m = testing::llama3_70b();
  const double per_token = model::megatron_model_flops(m, 1).value() / 8192;
  CHECK(per_token / 1e9 == doctest::Approx(448.8).epsilon(0.002));
}

TEST_CASE("Qwen3-235B-A22B at s = 4096: about 148 GFLOP per token, experts at top-k x expert width") {
  const auto m = testing::qwen3_235b();
  const double per_token = model::megatron_model_flops(m, 1).value() / 4096;
  CHECK(per_token / 1e9 == doctest::Approx(148).epsilon(0.01));
  // Shared experts add their width at every token: one of 1536 adds 12 l h 1536 x 1.5 per token.
  auto shared = m;
  shared.moe->shared_experts = 1;
  const double extra = model::megatron_model_flops(shared, 1).value() / 4096 - per_token;
  CHECK(extra == doctest::Approx(12.0 * 94 * 4096 * 1536 * 1.5).epsilon(1e-9));
}

TEST_CASE("the vocabulary is padded to a multiple of 128 as Megatron-LM pads it") {
  auto m = testing::gpt(2, 1024, 16, 1024, 50257); // GPT-2's vocabulary pads to 50304
  auto padded = m;
  padded.vocab = 50304;
  CHECK(model::megatron_model_flops(m, 1).value() == doctest::Approx(model::megatron_model_flops(padded, 1).value()));
}

TEST_CASE("DeepSeek-V3 at s = 4096: about 249 GFLOP per token with MLA, 3 dense and 58 MoE layers") {
  // Megatron-LM's formula without its multi-token-prediction layer (mtp_num_layers = 0), with the
  // causal halving of the attention core. Per token and layer, x 6 (3 passes x 2 FLOPs per MAC):
  //   MLA linear  1536 (7168 + 128 x 192 + 1) + 512 (7168 + 128 x 256 + 1) + 7168 x 64 + 128 x 128 x 7168
  //   MLA core    4096 x 128 x (192 + 128) / 2
  //   MLP         7168 x 3 x 18432 (dense) = 7168 x 3 x (8 + 1) x 2048 (MoE): the same here
  //   logits      7168 x 129280 / 61 (129280 is a multiple of 128)
  const auto m = testing::deepseek_v3();
  const double linear =
      1536.0 * (7168 + 128 * 192 + 1) + 512.0 * (7168 + 128 * 256 + 1) + 7168.0 * 64 + 128.0 * 128 * 7168;
  const double core = 4096.0 * 128 * (192 + 128) / 2;
  const double mlp = 7168.0 * 3 * 18432;
  const double expected = 6 * (61 * (linear + core + mlp) + 7168.0 * 129280);
  const double per_token = model::megatron_model_flops(m, 1).value() / 4096;
  CHECK(per_token == doctest::Approx(expected).epsilon(1e-12));
  CHECK(per_token / 1e9 == doctest::Approx(249.8).epsilon(0.001));
}

TEST_CASE("DeepSeek-V3's multi-token-prediction depth adds a MoE layer, its projection and a second logit") {
  // Megatron-LM counts each depth (--mtp-num-layers) as one more layer of the last layer's kind
  // (MoE here), 6 (3h + 2h^2) per token for its norms and eh_proj, and its own logits. Per token,
  // x 6 as above: MLA linear and core, 9 experts of width 2048 (8 routed + 1 shared), eh_proj
  // (2 x 7168^2), the norms and 7168 x 129280 logits.
  auto m = testing::deepseek_v3();
  const double without = model::megatron_model_flops(m, 1).value() / 4096;
  m.mtp_layers = 1;
  const double with = model::megatron_model_flops(m, 1).value() / 4096;
  const double linear =
      1536.0 * (7168 + 128 * 192 + 1) + 512.0 * (7168 + 128 * 256 + 1) + 7168.0 * 64 + 128.0 * 128 * 7168;
  const double core = 4096.0 * 128 * (192 + 128) / 2;
  const double experts = 7168.0 * 3 * 9 * 2048;
  const double projection = 3 * 7168.0 + 2 * 7168.0 * 7168;
  const double delta = 6 * (linear + core + experts + projection + 7168.0 * 129280);
  CHECK(with - without == doctest::Approx(delta).epsilon(1e-12));
  CHECK(with / 1e9 == doctest::Approx(260.0).epsilon(0.001)); // ~249.8 + 10.2
}
