// Mixed dense and MoE layers (model.moe.dense_layers > 0; DeepSeek-V3 keeps its first 3 layers
// dense): parameters, expert parameters and activations per pipeline stage, each closed form.
#include <doctest/doctest.h>

#include <twocs/model/layer_activations.hpp>
#include <twocs/model/memory.hpp>
#include <twocs/model/parameters.hpp>

#include "support/modern_models.hpp"
#include "support/scenarios.hpp"

using namespace twocs::model;

namespace {

/// Qwen3-235B's shapes with 4 layers, the first `dense` of them dense (ffn_hidden 12288).
TransformerConfig mixed(std::int64_t dense) {
  auto m = twocs::testing::qwen3_235b();
  m.layers = 4;
  m.moe->dense_layers = dense;
  return m;
}

/// Two pipeline stages, 8 micro-batches of one sequence.
TrainingPlan two_stages() { return twocs::testing::plan_of(1, 2, 1, 8); }

} // namespace

TEST_CASE("a dense layer of a mixed model holds the dense SwiGLU MLP instead of the router and experts") {
  const std::int64_t h = 4096, f = 12288, fe = 1536, experts = 128;
  const auto all_moe = count_parameters(mixed(0), 1);
  const auto counts = count_parameters(mixed(1), 1);
  // fc1 h x 2f with bias 2f, fc2 f x h with bias h (Megatron-LM's linear layers).
  const std::int64_t dense_mlp = h * 2 * f + 2 * f + f * h + h;
  // The router h x E and E experts of 3 h fe (no biases).
  const std::int64_t moe_mlp = h * experts + experts * 3 * h * fe;
  CHECK(counts.per_layer == all_moe.per_layer);
  CHECK(counts.per_layer - counts.dense_per_layer == moe_mlp - dense_mlp);
  CHECK(all_moe.total(4) - counts.total(4) == moe_mlp - dense_mlp);
  CHECK(counts.layer_range(0, 2) == counts.dense_per_layer + counts.per_layer);
  CHECK(counts.expert_range(0, 2) == counts.expert_per_layer);
  CHECK(counts.expert_range(1, 3) == 3 * counts.expert_per_layer);
}

TEST_CASE("a pipeline stage of dense layers holds no expert state and the dense layers' activations") {
  const auto plan = two_stages();
  const auto mixed_report = estimate_memory(mixed(2), plan);
  const auto moe_report = estimate_memory(mixed(0), plan);
  REQUIRE(mixed_report.stages.size() == 2);
  const auto counts = count_parameters(mixed(2), 1);
  // bf16: 2-byte weights; stage 0 holds layers 0 and 1, both dense, stage 1 two MoE layers.
  const double weights0 = mixed_report.stages[0].breakdown.weights.value();
  CHECK(moe_report.stages[0].breakdown.weights.value() - weights0 ==
        doctest::Approx(2.0 * 2 * static_cast<double>(counts.per_layer - counts.dense_per_layer)));
  CHECK(mixed_report.stages[1].breakdown.weights.value() ==
        doctest::Approx(moe_report.stages[1].breakdown.weights.value()));
  // Activations: the dense FFN saves s b (2 h + 2 x 2f + 2f) bytes where the MoE saves top_k = 8
  // routed copies of s b (2 h + 2 x 2 fe + 2 fe) (layer_activations.hpp), s = 4096, b = 1.
  const auto dense_units = layer_activation_units(mixed(2), false);
  const auto moe_units = layer_activation_units(mixed(2), true);
  const double h = 4096, f = 12288, fe = 1536;
  CHECK(moe_units.split - dense_units.split == doctest::Approx(8 * (2 + 6 * fe / h) - 6 * f / h));
  // 1F1B: stage 0 holds p = 2 micro-batches in flight, each of its 2 layers.
  const double sbh = 4096 * h;
  const double delta = 2 * 2 * sbh * (moe_units.split - dense_units.split);
  CHECK(moe_report.stages[0].breakdown.activations.value() - mixed_report.stages[0].breakdown.activations.value() ==
        doctest::Approx(delta));
}

TEST_CASE("an MLA layer holds the down and up projections and latent norms instead of the fused QKV") {
  auto m = twocs::testing::deepseek_v3();
  const std::int64_t h = 7168, a = 128;
  auto gqa = m;
  gqa.mla.reset();
  gqa.head_dim_override = 128;
  const auto mla = count_parameters(m, 1);
  const auto plain = count_parameters(gqa, 1);
  // q: h x 1536 + 1536 (norm) + 1536 x a 192; kv: h x (512 + 64) + 512 (norm) + 512 x a (128 + 128).
  const std::int64_t projections = h * 1536 + 1536 + 1536 * a * 192 + h * 576 + 512 + 512 * a * 256;
  const std::int64_t qkv = h * 3 * a * 128 + 3 * a * 128;
  CHECK(mla.per_layer - plain.per_layer == projections - qkv);
  // Tensor parallelism splits the up projections over the heads; the down projections are duplicated.
  const std::int64_t split = count_parameters(m, 8).per_layer;
  CHECK(split < mla.per_layer);
  // DeepSeek-V3: 671B parameters in the main model; its 14B MTP module makes 685B
  // (deepseek-ai/DeepSeek-V3 README), counted as the checkpoint stores it: one MoE layer, the
  // block (three RMSNorms of h, eh_proj 2h x h), and its own embedding and output head.
  CHECK(static_cast<double>(mla.total(61)) / 1e9 == doctest::Approx(671.0).epsilon(0.01));
  const double block = 3.0 * h + 2.0 * h * h;
  CHECK(static_cast<double>(mla.mtp_block) == doctest::Approx(block));
  const double module = static_cast<double>(mla.mtp_range(61, 1)) + 2.0 * static_cast<double>(mla.embedding);
  CHECK(module - block == doctest::Approx(static_cast<double>(mla.per_layer + 2 * mla.embedding)));
  CHECK(module / 1e9 == doctest::Approx(14.0).epsilon(0.05)); // 13.5B: "14B" rounded
}

TEST_CASE(
    "the weights replicated over the tensor group: norms and biases, a MoE layer's router, MLA's down projections") {
  // GPT: two LayerNorms (2 h each) and the two row-parallel biases (Shoeybi et al. 2019).
  auto gpt = twocs::testing::gpt(4, 256, 8, 128, 1024);
  CHECK(count_parameters(gpt, 2).replicated_per_layer == 6 * 256);
  // Qwen3 (RMSNorm, h each, and QK-norm's two head_dim scales): the router h x E takes the place
  // of fc2's bias in a MoE layer.
  const std::int64_t h = 4096, experts = 128, qk = 2 * 128;
  const auto qwen = count_parameters(mixed(1), 4, 8);
  CHECK(qwen.replicated_dense_per_layer == 2 * h + 2 * h + qk);
  CHECK(qwen.replicated_per_layer == 2 * h + h + h * experts + qk);
  // Layers 0-3 with the first dense: one dense and three MoE layers.
  CHECK(qwen.replicated_range(0, 4) == qwen.replicated_dense_per_layer + 3 * qwen.replicated_per_layer);
  CHECK(qwen.replicated_range(1, 3) == 3 * qwen.replicated_per_layer);
  // DeepSeek-V3 (h 7168, 256 experts, one shared expert): its q and kv down projections and latent
  // norms too, h x 1536 + 1536 and h x (512 + 64) + 512; the shared expert keeps its fc2 bias.
  const std::int64_t d = 7168;
  const auto ds = count_parameters(twocs::testing::deepseek_v3(), 8, 64);
  CHECK(ds.replicated_per_layer == 2 * d + 2 * d + d * 256 + (d * 1536 + 1536) + (d * 576 + 512));
}
