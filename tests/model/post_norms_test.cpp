// Sandwich norms (model.post_norms; Gemma 2 and 3): a norm on the attention's and the FFN's
// outputs before each residual add, its backward after the residual's, two more norms' weights
// and their saved inputs.
#include <doctest/doctest.h>

#include <string>
#include <variant>

#include <twocs/model/layer_activations.hpp>
#include <twocs/model/layer_ops.hpp>
#include <twocs/model/parameters.hpp>

#include "support/modern_models.hpp"
#include "support/step_lookup.hpp"

using namespace twocs::model;

namespace {

using twocs::testing::find_step;
using twocs::testing::step_index;

LayerShape sandwich_layer(bool post_norms) {
  LayerShape shape;
  shape.model = twocs::testing::mistral_7b(4096, 0);
  shape.model.post_norms = post_norms;
  shape.tensor = 2;
  shape.sequence_parallel = true;
  shape.attention = AttentionKernel::fused;
  return shape;
}

} // namespace

TEST_CASE("sandwich norms run on the attention's and the FFN's outputs, before each residual add") {
  const auto steps = transformer_layer_forward(sandwich_layer(true));
  CHECK(step_index(steps, "attn.out.reduce_scatter") < step_index(steps, "attn.post_norm"));
  CHECK(step_index(steps, "attn.post_norm") < step_index(steps, "attn.residual"));
  CHECK(step_index(steps, "mlp.fc2.reduce_scatter") < step_index(steps, "mlp.post_norm"));
  CHECK(step_index(steps, "mlp.post_norm") < step_index(steps, "mlp.residual"));
  // Each is the pre-norms' kernel: b s h / t elements under sequence parallelism.
  CHECK(find_step(steps, "attn.post_norm")->bytes.value() ==
        doctest::Approx(find_step(steps, "attn.norm")->bytes.value()));
  CHECK_FALSE(find_step(transformer_layer_forward(sandwich_layer(false)), "attn.post_norm"));
  const auto backward = transformer_layer_backward(sandwich_layer(true));
  CHECK(step_index(backward, "mlp.residual.bwd") < step_index(backward, "mlp.post_norm.bwd"));
  CHECK(step_index(backward, "mlp.post_norm.bwd") < step_index(backward, "mlp.fc2.all_gather"));
  CHECK(step_index(backward, "attn.post_norm.bwd") < step_index(backward, "attn.out.all_gather"));
  CHECK(find_step(backward, "attn.post_norm.bwd")->grad_params == 4096); // an RMSNorm's h scales
}

TEST_CASE("sandwich norms add two norms' weights and keep their inputs") {
  auto plain = twocs::testing::mistral_7b(4096, 0);
  auto sandwich = plain;
  sandwich.post_norms = true;
  const auto with = count_parameters(sandwich, 2);
  const auto without = count_parameters(plain, 2);
  CHECK(with.per_layer - without.per_layer == 2 * 4096);
  CHECK(with.replicated_per_layer - without.replicated_per_layer == 2 * 4096);
  // Two more norm inputs of s b h, 16-bit: 4 units.
  CHECK(layer_activation_units(sandwich).replicated - layer_activation_units(plain).replicated == doctest::Approx(4.0));
}
