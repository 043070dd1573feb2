// Windowed and whole-prefix layers in one model (model.full_attention_every): Gemma 3's five
// local layers per global one, Gemma 2's and gpt-oss's alternation. Each layer's attention runs
// at its own window, and model FLOPs sum the layers' kinds.
#include <doctest/doctest.h>

#include <twocs/model/flops.hpp>
#include <twocs/model/layer_ops.hpp>
#include <twocs/model/validate.hpp>

#include <twocs/error.hpp>

#include "support/modern_models.hpp"
#include "support/step_lookup.hpp"

using namespace twocs::model;

namespace {

using twocs::testing::find_step;
using twocs::testing::mistral_7b;

TrainingPlan one_device() {
  TrainingPlan plan;
  plan.global_batch = 1;
  plan.micro_batch = 1;
  plan.attention = AttentionKernel::fused;
  return plan;
}

} // namespace

TEST_CASE("every K-th layer attends the whole prefix, the others the window") {
  auto m = mistral_7b(8192, 1024);
  m.full_attention_every = 6; // Gemma 3: layers 5, 11, ... are global
  for (std::int64_t i = 0; i < 14; ++i) CHECK(m.window_at(i) == ((i == 5 || i == 11) ? 0 : 1024));
  const LayerShape shape = LayerShape::of(m, one_device());
  CHECK(shape.attention_window() == 1024);
  CHECK(shape.for_layer(4).attention_window() == 1024);
  CHECK(shape.for_layer(5).full_attention);
  CHECK(shape.for_layer(5).attention_window() == 0);
  // The global layer's FlashAttention kernel visits s / 2 keys per query, the local one's W (2 s - W) / (2 s).
  const auto local_layer = transformer_layer_forward(shape.for_layer(4));
  const auto global_layer = transformer_layer_forward(shape.for_layer(5));
  const auto* local = find_step(local_layer, "attn.flash");
  const auto* global = find_step(global_layer, "attn.flash");
  REQUIRE(local);
  REQUIRE(global);
  CHECK(local->flops.value() / global->flops.value() ==
        doctest::Approx((1024.0 * (2 * 8192 - 1024) / (2 * 8192)) / 4096));
  // Without full_attention_every every layer keeps the window.
  m.full_attention_every = 0;
  CHECK(m.window_at(5) == 1024);
}

TEST_CASE("model FLOPs of an alternating model: the mean of the all-windowed and the unwindowed models") {
  auto windowed = mistral_7b(8192, 1024);
  auto whole = mistral_7b(8192, 0);
  auto alternating = windowed;
  alternating.full_attention_every = 2; // 16 windowed and 16 global layers of 32
  const double w = model_flops_per_iteration(windowed, one_device()).value();
  const double g = model_flops_per_iteration(whole, one_device()).value();
  CHECK(w < g);
  CHECK(model_flops_per_iteration(alternating, one_device()).value() == doctest::Approx((w + g) / 2).epsilon(1e-12));
}

TEST_CASE("full_attention_every needs a window, and a period of at least 2") {
  auto m = mistral_7b(8192, 0);
  m.full_attention_every = 2;
  try {
    validate(m);
    FAIL("expected an InputError");
  } catch (const twocs::InputError& e) {
    CHECK(e.key_path() == "model.full_attention_every");
  }
  m.sliding_window = 1024;
  CHECK_NOTHROW(validate(m));
  m.full_attention_every = 1;
  CHECK_THROWS_AS(validate(m), twocs::InputError);
}
