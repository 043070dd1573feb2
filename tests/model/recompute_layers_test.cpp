// training.recompute_layers: Megatron-LM's block recomputation (megatron/core/recompute.py,
// recompute_method "block"): each model chunk recomputes its first N layers and keeps the rest.
#include <doctest/doctest.h>

#include <twocs/model/memory.hpp>
#include <twocs/model/stage_partition.hpp>

#include "support/scenarios.hpp"

using namespace twocs;
using namespace twocs::model;
using testing::gpt;
using testing::plan_of;

TEST_CASE("recompute_layers recomputes the first N layers of every model chunk") {
  auto plan = plan_of(1, 2, 1, 4);
  plan.parallelism.virtual_stages = 2; // chunks of 2 layers: 0-1, 2-3, 4-5, 6-7
  plan.recompute = Recompute::full;
  plan.recompute_layers = 1;
  const auto m = gpt(8, 1024, 16);
  const auto chunks = partition_layers(m, plan);
  REQUIRE(chunks.size() == 4);
  for (const auto& chunk : chunks) {
    CHECK(recomputes_layer(plan, chunk, chunk.first_layer));
    CHECK_FALSE(recomputes_layer(plan, chunk, chunk.first_layer + 1));
  }
  CHECK(recomputed_share(m, plan) == doctest::Approx(4.0 / 8.0));
  plan.recompute_layers = 2; // as many as a chunk holds: every layer, as without the key
  CHECK(recomputed_share(m, plan) == 1.0);
  plan.recompute_layers = 7; // more than a chunk holds: Megatron's loop stops at the chunk's end
  CHECK(recomputed_share(m, plan) == 1.0);
}

TEST_CASE("recompute_layers counts per chunk on uneven partitions (BLOOM-176B: 5, ten of 6, 5)") {
  auto plan = plan_of(4, 12, 8, 2, 2048);
  plan.recompute = Recompute::full;
  const auto bloom = gpt(70, 14336, 112);
  plan.recompute_layers = 5;
  CHECK(recomputed_share(bloom, plan) == doctest::Approx(12.0 * 5.0 / 70.0));
  plan.recompute_layers = 6;
  CHECK(recomputed_share(bloom, plan) == 1.0);
}

TEST_CASE("recompute_layers is read only under full recomputation, as recompute_modules only under selective") {
  auto plan = plan_of(1, 1, 1, 1);
  const auto m = gpt(4, 1024, 16);
  const ModelChunk chunk = partition_layers(m, plan).front();
  plan.recompute_layers = 1;
  plan.recompute = Recompute::none;
  CHECK_FALSE(recomputes_layer(plan, chunk, 3));
  CHECK(recomputed_share(m, plan) == 0.0);
  plan.recompute = Recompute::selective;
  CHECK(recomputes_layer(plan, chunk, 3));
  CHECK(recomputed_share(m, plan) == 1.0);
}

TEST_CASE("block recomputation holds its recomputed layers' inputs and the other layers' whole activations") {
  // Korthikanti et al. 2022, Table 2, with the paper's 22B layer: h 6144, a 64, s 2048, b 4, t 8;
  // four layers on one stage, the first recomputed: 2 s b h for it, 10 + 24/t + 5as/(ht) s b h for
  // each of the other three, and the recomputed layer's whole activations rebuilt in its backward.
  const auto m = gpt(4, 6144, 64);
  auto plan = plan_of(8, 1, 1, 4, 4);
  plan.attention = AttentionKernel::unfused;
  const double s = 2048, b = 4, h = 6144, a = 64, t = 8;
  const double sbh = s * b * h;
  const double whole_layer = sbh * (10 + 24 / t + 5 * a * s / (h * t));
  const double head = 4 * s * b * 51200 / t; // the output head's fp32 logits
  plan.recompute = Recompute::full;
  plan.recompute_layers = 1;
  const auto block = estimate_memory(m, plan).stages[0].breakdown.activations.value();
  CHECK(block == doctest::Approx(2 * sbh + 3 * whole_layer + whole_layer + head));
  plan.recompute_layers = 0; // every layer
  const auto every = estimate_memory(m, plan).stages[0].breakdown.activations.value();
  CHECK(every == doctest::Approx(4 * 2 * sbh + whole_layer + head));
}

TEST_CASE("under block recomputation a multi-token-prediction depth keeps its whole activations") {
  // Megatron-Core does not recompute MTP depths under the block method (multi_token_prediction.py),
  // and does under the uniform one: the difference is one depth's whole activations against its input.
  auto m = gpt(4, 6144, 64);
  m.mtp_layers = 1;
  auto plan = plan_of(8, 1, 1, 4, 4);
  plan.attention = AttentionKernel::unfused;
  plan.recompute = Recompute::full;
  const double s = 2048, b = 4, h = 6144, a = 64, t = 8;
  const double sbh = s * b * h;
  const double whole_layer = sbh * (10 + 24 / t + 5 * a * s / (h * t));
  plan.recompute_layers = 4; // every transformer layer of the chunk, as uniform
  const auto block = estimate_memory(m, plan).stages[0].breakdown.activations.value();
  plan.recompute_layers = 0;
  const auto uniform = estimate_memory(m, plan).stages[0].breakdown.activations.value();
  CHECK(block - uniform == doctest::Approx(whole_layer - 2 * sbh));
}
