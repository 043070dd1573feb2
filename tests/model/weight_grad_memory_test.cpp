// What zero-bubble schedules keep for their deferred W passes, and the memory of zb-h1 and
// dualpipe per stage.
#include <doctest/doctest.h>

#include <twocs/model/layer_ops.hpp>
#include <twocs/model/memory.hpp>
#include <twocs/model/weight_grad_memory.hpp>

#include "support/scenarios.hpp"

using namespace twocs;
using namespace twocs::model;

TEST_CASE("a GPT layer keeps 32 s b h bytes for its W pass (Qi et al. 2024, Table 1)") {
  const auto m = testing::gpt(2, 1024, 16, 2048);
  const auto plan = testing::plan_of(1, 1, 1, 1, 2);
  const double sbh = 2048.0 * 2 * 1024;
  CHECK(weight_grad_operand_bytes(LayerShape::of(m, plan)).value() == doctest::Approx(32 * sbh));
}

TEST_CASE("zb-h1 holds 1F1B's whole micro-batches on stage i plus i micro-batches of W operands") {
  const auto m = testing::gpt(8, 1024, 16);
  auto plan = testing::plan_of(1, 4, 1, 16);
  const auto one_f_one_b = estimate_memory(m, plan);
  plan.pipeline_schedule = PipelineSchedule::zb_h1;
  const auto zb = estimate_memory(m, plan);
  const double w = weight_grad_operand_bytes(LayerShape::of(m, plan)).value() * 2; // 2 layers per stage
  for (std::size_t i = 0; i < 4; ++i) {
    CAPTURE(i);
    CHECK(zb.stages[i].micro_batches_in_flight == one_f_one_b.stages[i].micro_batches_in_flight);
    CHECK(zb.stages[i].breakdown.activations.value() ==
          doctest::Approx(one_f_one_b.stages[i].breakdown.activations.value() + static_cast<double>(i) * w));
  }
  // The first stage holds what it holds under 1F1B (section 2.1).
  CHECK(zb.stages[0].breakdown.total() == one_f_one_b.stages[0].breakdown.total());
}

TEST_CASE("dualpipe holds two chunks' parameters and p + 1 micro-batches of activations per rank") {
  const auto m = testing::gpt(8, 1024, 16, 2048, 128);
  auto plan = testing::plan_of(1, 4, 1, 16);
  const auto one_f_one_b = estimate_memory(m, plan);
  plan.pipeline_schedule = PipelineSchedule::dualpipe;
  const auto dual = estimate_memory(m, plan);
  for (std::size_t i = 0; i < 4; ++i) {
    CAPTURE(i);
    const auto& base = one_f_one_b.stages[i];
    const auto& mirror = one_f_one_b.stages[3 - i];
    CHECK(dual.stages[i].layers == base.layers + mirror.layers);
    // The end ranks hold the embedding and the output layer: a tied output weight needs no copy.
    const bool ends = i == 0 || i == 3;
    if (!ends) CHECK(dual.stages[i].breakdown.weights == base.breakdown.weights + mirror.breakdown.weights);
    if (ends) CHECK(dual.stages[i].breakdown.weights < base.breakdown.weights + mirror.breakdown.weights);
    CHECK(dual.stages[i].micro_batches_in_flight == 5);
  }
  // 5 micro-batches of one chunk's 2 layers where 1F1B's stage 1 holds 3 (4 - 1).
  const double per_set = one_f_one_b.stages[1].breakdown.activations.value() / 3.0;
  CHECK(dual.stages[1].breakdown.activations.value() == doctest::Approx(5 * per_set));
}
