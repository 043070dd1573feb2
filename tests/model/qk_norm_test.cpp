// QK-norm (model.qk_norm; Qwen3, Megatron-Core --qk-layernorm): an RMSNorm over each head's query
// and each key head after the QKV projection and before rotary embeddings, its backward before the
// QKV projection's, two head_dim scales, and its saved inputs.
#include <doctest/doctest.h>

#include <string>
#include <variant>

#include <twocs/error.hpp>
#include <twocs/model/layer_activations.hpp>
#include <twocs/model/layer_ops.hpp>
#include <twocs/model/parameters.hpp>
#include <twocs/model/validate.hpp>

#include "support/modern_models.hpp"
#include "support/step_lookup.hpp"

using namespace twocs::model;

namespace {

using twocs::testing::find_step;
using twocs::testing::step_index;

/// Qwen3-235B's attention (64 query heads, 4 key/value heads of 128) on 2 tensor-parallel ranks.
LayerShape qwen3_layer(bool qk_norm) {
  LayerShape shape;
  shape.model = twocs::testing::qwen3_235b();
  shape.model.qk_norm = qk_norm;
  shape.tensor = 2;
  shape.sequence_parallel = true;
  shape.attention = AttentionKernel::fused;
  return shape;
}

} // namespace

TEST_CASE("QK-norm normalises the rank's query heads and key heads between the QKV GEMM and RoPE") {
  const auto steps = transformer_layer_forward(qwen3_layer(true));
  const auto* q = find_step(steps, "attn.q_norm");
  const auto* k = find_step(steps, "attn.k_norm");
  REQUIRE(q);
  REQUIRE(k);
  // s = 4096 tokens (the QKV output is not sequence-split), 32 query heads and 2 key heads of 128.
  CHECK(q->bytes.value() / k->bytes.value() == doctest::Approx(32.0 / 2));
  const auto* norm = find_step(steps, "attn.norm"); // the layer's own norm: b s h / t elements
  REQUIRE(norm);
  CHECK(q->bytes.value() / norm->bytes.value() == doctest::Approx((4096.0 * 32 * 128) / (4096.0 * 4096 / 2)));
  CHECK(step_index(steps, "attn.qkv") < step_index(steps, "attn.q_norm"));
  CHECK(step_index(steps, "attn.k_norm") < step_index(steps, "attn.rope"));
  CHECK_FALSE(find_step(transformer_layer_forward(qwen3_layer(false)), "attn.q_norm"));
}

TEST_CASE("QK-norm's backward runs after RoPE's and before the QKV GEMM's, finalising two head_dim scales") {
  const auto steps = transformer_layer_backward(qwen3_layer(true));
  const auto* q = find_step(steps, "attn.q_norm.bwd");
  const auto* k = find_step(steps, "attn.k_norm.bwd");
  REQUIRE(q);
  REQUIRE(k);
  CHECK(q->grad_params == 128);
  CHECK(k->grad_params == 128);
  CHECK(step_index(steps, "attn.rope.bwd") < step_index(steps, "attn.q_norm.bwd"));
  CHECK(step_index(steps, "attn.k_norm.bwd") < step_index(steps, "attn.qkv.dgrad"));
  // Two scales more per layer, replicated over the tensor group.
  auto plain = twocs::testing::qwen3_235b();
  plain.qk_norm = false;
  const auto with = count_parameters(twocs::testing::qwen3_235b(), 2, 8);
  const auto without = count_parameters(plain, 2, 8);
  CHECK(with.per_layer - without.per_layer == 2 * 128);
  CHECK(with.replicated_per_layer - without.replicated_per_layer == 2 * 128);
}

TEST_CASE("QK-norm saves its inputs: Q and K before the norms, (a + g) d_head / h units of s b h") {
  auto plain = twocs::testing::qwen3_235b();
  plain.qk_norm = false;
  const double with = layer_activation_units(twocs::testing::qwen3_235b()).split;
  const double without = layer_activation_units(plain).split;
  CHECK(with - without == doctest::Approx(2.0 * (64 + 4) * 128 / 4096));
}

TEST_CASE("QK-norm with latent attention is refused: MLA normalises its latents") {
  auto m = twocs::testing::deepseek_v3();
  CHECK_NOTHROW(validate(m));
  m.qk_norm = true;
  try {
    validate(m);
    FAIL("expected an InputError");
  } catch (const twocs::InputError& e) {
    CHECK(e.key_path() == "model.qk_norm");
  }
}
