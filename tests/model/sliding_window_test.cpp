// Sliding-window attention (model.sliding_window): each query attends itself and the W - 1 keys
// before it, so a causal kernel visits min(i + 1, W) keys for query i; counted here by summing.
#include <doctest/doctest.h>

#include <algorithm>

#include <twocs/model/layer_ops.hpp>

#include "support/modern_models.hpp"
#include "support/step_lookup.hpp"

using namespace twocs::model;

namespace {

using twocs::testing::find_step;
using twocs::testing::mistral_7b;
using twocs::testing::single_device_layer;

/// Keys all queries of a sequence of `s` attend under a causal window `w`, one by one.
double attended_pairs(std::int64_t s, std::int64_t w) {
  double pairs = 0;
  for (std::int64_t i = 0; i < s; ++i) pairs += static_cast<double>(std::min(i + 1, w));
  return pairs;
}

} // namespace

TEST_CASE("a causal window visits min(i + 1, W) keys per query: W (2 s - W) / (2 s) on average") {
  const AttentionShape window{32, 8192, 8192, 128, true, 0, 4096};
  CHECK(window.attended() == 3072);
  CHECK(static_cast<double>(window.attended()) * 8192 == doctest::Approx(attended_pairs(8192, 4096)).epsilon(1e-3));
  // A window as long as the sequence, or none, is the causal s / 2.
  CHECK(AttentionShape{32, 4096, 4096, 128, true, 0, 4096}.attended() == 2048);
  CHECK(AttentionShape{32, 4096, 4096, 128, true, 0, 0}.attended() == 2048);
}

TEST_CASE("FlashAttention with a window skips the blocks before it: forward FLOPs 4 s W' d per head") {
  const auto windowed = transformer_layer_forward(single_device_layer(mistral_7b(8192, 4096), AttentionKernel::fused));
  const auto causal = transformer_layer_forward(single_device_layer(mistral_7b(8192, 0), AttentionKernel::fused));
  const auto* flash = find_step(windowed, "attn.flash");
  const auto* whole = find_step(causal, "attn.flash");
  REQUIRE(flash);
  REQUIRE(whole);
  // Q.K^T and P.V over the attended keys: 2 x 2 s W' d per head, W' = 3072 (of s / 2 = 4096 causal).
  CHECK(flash->flops.value() == doctest::Approx(4.0 * 8192 * 3072 * 128 * 32));
  CHECK(flash->flops.value() / whole->flops.value() == doctest::Approx(3072.0 / 4096));
  CHECK(flash->attention->window == 4096);
  // The other kernels do not change.
  CHECK(find_step(windowed, "attn.qkv")->flops.value() ==
        doctest::Approx(find_step(causal, "attn.qkv")->flops.value()));
}

TEST_CASE("unfused attention computes every score and masks all but the window: no model work there") {
  const auto steps = transformer_layer_forward(single_device_layer(mistral_7b(8192, 4096), AttentionKernel::unfused));
  const auto* scores = find_step(steps, "attn.scores");
  REQUIRE(scores);
  CHECK(scores->flops.value() == doctest::Approx(2.0 * 8192 * 8192 * 128 * 32)); // all s x s
  CHECK(scores->model_flops().value() == doctest::Approx(scores->flops.value() * 3072 / 8192));
}
