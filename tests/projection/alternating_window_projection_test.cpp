// The closed form of a model whose layers alternate windowed and whole-prefix attention
// (model.full_attention_every): its layer is the mean of the two kinds over the period.
#include <doctest/doctest.h>

#include <twocs/cost/roofline.hpp>
#include <twocs/projection/closed_form.hpp>

#include "support/scenarios.hpp"

using namespace twocs;

namespace {

using testing::fused_single_plan;
using testing::windowed_gpt;

} // namespace

TEST_CASE("the closed form costs an alternating model's layer as the mean of its two kinds") {
  const auto cluster = testing::cluster_of(1, 1);
  const cost::RooflineCostModel cost(cluster.device);
  const auto layer = [&](const model::TransformerConfig& m) {
    return projection::project(m, fused_single_plan(), cluster, cost).layer.compute.value();
  };
  CHECK(layer(windowed_gpt(1024, 2)) ==
        doctest::Approx((layer(windowed_gpt(1024, 0)) + layer(windowed_gpt(0, 0))) / 2));
  // Gemma 3's five local layers per global one.
  CHECK(layer(windowed_gpt(1024, 6)) ==
        doctest::Approx((5 * layer(windowed_gpt(1024, 0)) + layer(windowed_gpt(0, 0))) / 6));
}
