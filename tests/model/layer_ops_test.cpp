#include <doctest/doctest.h>

#include <string>
#include <variant>

#include <twocs/model/flops.hpp>
#include <twocs/model/layer_ops.hpp>
#include <twocs/model/parameters.hpp>

#include "support/scenarios.hpp"

using namespace twocs::model;

namespace {

using twocs::testing::gpt;

LayerShape shape_of(const TransformerConfig& m, std::int64_t b, std::int64_t t, bool sp = false) {
  LayerShape shape;
  shape.model = m;
  shape.micro_batch = b;
  shape.tensor = t;
  shape.sequence_parallel = sp;
  return shape;
}

double gemm_flops(const StepSequence& steps, Pass pass) {
  double total = 0;
  for (const auto& step : steps)
    if (const auto* op = std::get_if<ComputeOp>(&step); op && op->gemm && op->pass == pass) total += op->flops.value();
  return total;
}

struct CollectiveCount {
  int all_reduce = 0, reduce_scatter = 0, all_gather = 0;
  double bytes = 0;
};

CollectiveCount collectives(const StepSequence& steps) {
  CollectiveCount c;
  for (const auto& step : steps) {
    const auto* op = std::get_if<CollectiveOp>(&step);
    if (!op) continue;
    CHECK(op->group == CommGroup::tensor);
    c.bytes += op->size.value();
    if (op->kind == Collective::all_reduce) ++c.all_reduce;
    if (op->kind == Collective::reduce_scatter) ++c.reduce_scatter;
    if (op->kind == Collective::all_gather) ++c.all_gather;
  }
  return c;
}

std::int64_t grad_params(const StepSequence& steps) {
  std::int64_t total = 0;
  for (const auto& step : steps)
    if (const auto* op = std::get_if<ComputeOp>(&step)) total += op->grad_params;
  return total;
}

} // namespace

TEST_CASE("a layer's GEMM FLOPs per rank are (24 b s h^2 + 4 b s^2 h) / t forward and twice that backward") {
  const auto m = gpt(1, 6144, 64);
  for (std::int64_t t : {1, 2, 8}) {
    CAPTURE(t);
    const auto shape = shape_of(m, 4, t);
    const double b = 4, s = 2048, h = 6144;
    // Narayanan et al. SC'21, Eq. 3: per layer forward 24 b s h^2 + 4 b s^2 h, split over t ranks.
    const double forward = (24 * b * s * h * h + 4 * b * s * s * h) / static_cast<double>(t);
    CHECK(gemm_flops(transformer_layer_forward(shape), Pass::forward) == doctest::Approx(forward).epsilon(1e-12));
    CHECK(gemm_flops(transformer_layer_backward(shape), Pass::backward) == doctest::Approx(2 * forward).epsilon(1e-12));
  }
}

TEST_CASE("tensor parallelism puts two all-reduces of b s h in each direction on every layer") {
  const auto m = gpt(1, 4096, 32);
  const double activation = 2.0 * 2048 * 4096 * 2; // b s h elements of 2 bytes, b = 2
  const auto fwd = collectives(transformer_layer_forward(shape_of(m, 2, 4)));
  CHECK(fwd.all_reduce == 2);
  CHECK(fwd.bytes == doctest::Approx(2 * activation));
  const auto bwd = collectives(transformer_layer_backward(shape_of(m, 2, 4)));
  CHECK(bwd.all_reduce == 2);
  CHECK(bwd.reduce_scatter == 0);
  CHECK(bwd.all_gather == 0);
  // One device: no communication at all.
  CHECK(collectives(transformer_layer_forward(shape_of(m, 2, 1))).bytes == 0);
  CHECK(collectives(transformer_layer_backward(shape_of(m, 2, 1))).bytes == 0);
}

TEST_CASE("sequence parallelism replaces each all-reduce by a reduce-scatter and an all-gather") {
  const auto m = gpt(1, 4096, 32);
  const auto fwd = collectives(transformer_layer_forward(shape_of(m, 1, 8, true)));
  CHECK(fwd.all_reduce == 0);
  CHECK(fwd.reduce_scatter == 2);
  CHECK(fwd.all_gather == 2);
  // Backward: the forward reduce-scatters become all-gathers, the all-gathers reduce-scatters,
  // and the sharded inputs of QKV and fc1 are all-gathered again for their weight gradients.
  const auto bwd = collectives(transformer_layer_backward(shape_of(m, 1, 8, true)));
  CHECK(bwd.all_reduce == 0);
  CHECK(bwd.reduce_scatter == 2);
  CHECK(bwd.all_gather == 4);
}

TEST_CASE("the asynchronous input-gradient all-reduce overlaps exactly the weight-gradient GEMM") {
  auto shape = shape_of(gpt(1, 4096, 32), 1, 8);
  const auto steps = transformer_layer_backward(shape);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const auto* op = std::get_if<CollectiveOp>(&steps[i]);
    if (!op) continue;
    CHECK(op->overlapped_ops == 1);
    REQUIRE(i + 1 < steps.size());
    CHECK(std::get<ComputeOp>(steps[i + 1]).name.ends_with(".wgrad"));
  }
  shape.tp_async_backward = false;
  for (const auto& step : transformer_layer_backward(shape))
    if (const auto* op = std::get_if<CollectiveOp>(&step)) CHECK(op->overlapped_ops == 0);
}

TEST_CASE("the backward pass finalises the gradient of every parameter of the layer once") {
  for (std::int64_t t : {1, 4}) {
    const auto m = gpt(1, 2048, 16);
    CHECK(grad_params(transformer_layer_backward(shape_of(m, 1, t))) == count_parameters(m, t).per_layer);
  }
}

TEST_CASE("parameter counts: 12 h^2 + 13 h per layer, GPT-3 175B in total") {
  const auto m = gpt(96, 12288, 96);
  const auto counts = count_parameters(m, 1);
  const std::int64_t h = 12288;
  CHECK(counts.per_layer == 12 * h * h + 13 * h);
  // Brown et al. 2020 report 175.0B; with V = 51200 and learned positions: 174.6B.
  CHECK(static_cast<double>(counts.total(96)) == doctest::Approx(174.6e9).epsilon(0.001));
  // Tensor parallelism splits the big matrices: per-rank count x t is a bit above the total
  // because biases of row-parallel layers and the norms are replicated.
  const auto split = count_parameters(m, 8);
  CHECK(split.per_layer * 8 > counts.per_layer);
  CHECK(static_cast<double>(split.per_layer * 8) ==
        doctest::Approx(static_cast<double>(counts.per_layer)).epsilon(0.001));
}

TEST_CASE("model FLOPs match Narayanan et al.'s closed form 72 B s l h^2 (1 + s/6h + V/12lh)") {
  auto m = gpt(96, 12288, 96);
  m.attention_mask = AttentionMask::full; // the closed form counts every score; causal halves the s/6h term
  TrainingPlan plan;
  plan.global_batch = 1536;
  plan.micro_batch = 1;
  plan.parallelism.tensor = 8;
  plan.parallelism.pipeline = 8;
  plan.parallelism.data = 16;
  const double B = 1536, s = 2048, l = 96, h = 12288, V = 51200;
  const double expected = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
  CHECK(model_flops_per_iteration(m, plan).value() == doctest::Approx(expected).epsilon(1e-9));
  m.attention_mask = AttentionMask::causal;
  const double causal = 72 * B * s * l * h * h * (1 + s / (12 * h) + V / (12 * l * h));
  CHECK(model_flops_per_iteration(m, plan).value() == doctest::Approx(causal).epsilon(1e-9));
}

TEST_CASE("SwiGLU doubles fc1's columns, grouped-query attention narrows QKV") {
  auto m = gpt(1, 4096, 32);
  m.ffn_kind = FfnKind::swiglu;
  m.ffn_hidden = 11008;
  m.kv_heads = 8;
  const auto steps = transformer_layer_forward(shape_of(m, 1, 1));
  for (const auto& step : steps) {
    const auto* op = std::get_if<ComputeOp>(&step);
    if (!op || !op->gemm) continue;
    if (op->name == "mlp.fc1") CHECK(op->gemm->n == 2 * 11008);
    if (op->name == "attn.qkv") CHECK(op->gemm->n == 4096 + 2 * 8 * 128);
  }
}

TEST_CASE("recomputation re-runs the whole forward (full) or the attention core (selective)") {
  const auto shape = shape_of(gpt(1, 4096, 32), 1, 2);
  const auto full = transformer_layer_recompute(shape, Recompute::full);
  CHECK(full.size() == transformer_layer_forward(shape).size());
  CHECK(gemm_flops(full, Pass::recompute) ==
        doctest::Approx(gemm_flops(transformer_layer_forward(shape), Pass::forward)));
  const auto selective = transformer_layer_recompute(shape, Recompute::selective);
  REQUIRE(selective.size() == 4);
  CHECK(std::get<ComputeOp>(selective[0]).name == "attn.scores");
  CHECK(std::get<ComputeOp>(selective[3]).name == "attn.context");
  CHECK(transformer_layer_recompute(shape, Recompute::none).empty());
}

TEST_CASE("vocabulary padding follows Megatron-LM's multiple of 128 t") {
  CHECK(local_vocab(51200, 8) == 6400);
  CHECK(local_vocab(50257, 1) == 50304);
  CHECK(local_vocab(50257, 8) == 51200 / 8); // padded to the next multiple of 1024
}

TEST_CASE("the optimizer step is Megatron-LM's multi-tensor passes: 52 bytes per parameter for fp16, 38 for bf16") {
  const auto bytes = [](const StepSequence& steps) {
    double total = 0;
    for (const auto& step : steps) total += std::get<ComputeOp>(step).bytes.value();
    return total;
  };
  // fp16: copy to fp32 main gradients 2 + 4, unscale 4 + 4, norm 4, Adam 16 + 12, copy back 4 + 2.
  const auto fp16 = optimizer_steps(1000, OptimizerKind::adam, Dtype::fp16);
  CHECK(fp16.size() == 5);
  CHECK(bytes(fp16) == doctest::Approx((6 + 8 + 4 + 28 + 6) * 1000.0));
  // bf16: fp32 main gradients already, no loss scale: norm, Adam, copy back.
  const auto bf16 = optimizer_steps(1000, OptimizerKind::adam, Dtype::bf16);
  CHECK(bf16.size() == 3);
  CHECK(bytes(bf16) == doctest::Approx((4 + 28 + 6) * 1000.0));
  // fp32: no master copy.
  CHECK(bytes(optimizer_steps(1000, OptimizerKind::adam, Dtype::fp32)) == doctest::Approx((4 + 28) * 1000.0));
  CHECK(bytes(optimizer_steps(1000, OptimizerKind::sgd, Dtype::fp32)) == doctest::Approx((4 + 20) * 1000.0));
}
