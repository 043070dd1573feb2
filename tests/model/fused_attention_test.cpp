// training.attention: fused replaces the attention core by FlashAttention kernels with the same
// model FLOPs, no s^2 HBM traffic, and no s^2 activations (Dao et al. 2022).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <variant>

#include <twocs/model/layer_ops.hpp>
#include <twocs/model/memory.hpp>

using namespace twocs::model;

namespace {

TransformerConfig gpt(std::int64_t h, std::int64_t a, std::int64_t s) {
  TransformerConfig m;
  m.name = "test";
  m.layers = 4;
  m.hidden = h;
  m.heads = a;
  m.kv_heads = a;
  m.ffn_hidden = 4 * h;
  m.vocab = 51200;
  m.seq_len = s;
  return m;
}

TrainingPlan plan_of(AttentionKernel attention, Recompute recompute = Recompute::none) {
  TrainingPlan plan;
  plan.global_batch = 8;
  plan.micro_batch = 2;
  plan.parallelism.tensor = 4;
  plan.parallelism.pipeline = 1;
  plan.parallelism.data = 1;
  plan.recompute = recompute;
  plan.attention = attention;
  return plan;
}

/// Model FLOPs (GEMMs not recomputed) of `steps`.
double model_flops(const StepSequence& steps) {
  double total = 0;
  for (const auto& step : steps)
    if (const auto* op = std::get_if<ComputeOp>(&step); op) total += op->model_flops().value();
  return total;
}

double bytes_of(const StepSequence& steps, const std::string& prefix) {
  double total = 0;
  for (const auto& step : steps)
    if (const auto* op = std::get_if<ComputeOp>(&step); op && op->name.rfind(prefix, 0) == 0)
      total += op->bytes.value();
  return total;
}

std::vector<std::string> names(const StepSequence& steps) {
  std::vector<std::string> out;
  for (const auto& step : steps)
    if (const auto* op = std::get_if<ComputeOp>(&step)) out.push_back(op->name);
  return out;
}

bool has(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

} // namespace

TEST_CASE("fused attention keeps the model FLOPs of the unfused path, forward and backward") {
  const auto m = gpt(4096, 32, 4096);
  const auto unfused = LayerShape::of(m, plan_of(AttentionKernel::unfused));
  const auto fused = LayerShape::of(m, plan_of(AttentionKernel::fused));
  CHECK(fused.attention == AttentionKernel::fused);
  CHECK(model_flops(transformer_layer_forward(fused)) ==
        doctest::Approx(model_flops(transformer_layer_forward(unfused))).epsilon(1e-12));
  CHECK(model_flops(transformer_layer_backward(fused)) ==
        doctest::Approx(model_flops(transformer_layer_backward(unfused))).epsilon(1e-12));
}

TEST_CASE("fused attention runs one kernel forward and recomputes the scores backward") {
  const auto m = gpt(4096, 32, 4096);
  const auto shape = LayerShape::of(m, plan_of(AttentionKernel::fused));
  const auto forward = names(transformer_layer_forward(shape));
  CHECK(has(forward, "attn.flash"));
  CHECK_FALSE(has(forward, "attn.scores"));
  CHECK_FALSE(has(forward, "attn.softmax"));
  CHECK_FALSE(has(forward, "attn.dropout"));
  CHECK_FALSE(has(forward, "attn.context"));
  const auto backward = transformer_layer_backward(shape);
  CHECK(has(names(backward), "attn.flash.bwd"));
  CHECK_FALSE(has(names(backward), "attn.softmax.bwd"));
  // The recomputed Q.K^T: 2 b s^2 h / t FLOPs with pass recompute, halved by the causal mask
  // (the kernel skips the key blocks above the diagonal).
  const double b = 2, s = 4096, h = 4096, t = 4;
  for (const auto& step : backward)
    if (const auto* op = std::get_if<ComputeOp>(&step); op && op->name == "attn.flash.bwd.recompute") {
      CHECK(op->pass == Pass::recompute);
      CHECK(op->flops.value() == doctest::Approx(2 * b * s * s * h / t / 2));
    }
  // Selective recomputation re-runs the fused forward.
  const auto selective = transformer_layer_recompute(shape, Recompute::selective);
  REQUIRE(selective.size() == 1);
  CHECK(std::get<ComputeOp>(selective[0]).name == "attn.flash");
  CHECK(std::get<ComputeOp>(selective[0]).pass == Pass::recompute);
}

TEST_CASE("the fused kernels carry their own kinds and the kernel call's shape") {
  const auto m = gpt(4096, 32, 4096);
  const auto shape = LayerShape::of(m, plan_of(AttentionKernel::fused));
  // b = 2 sequences of a / t = 8 heads, s = 4096, head dim h / a = 128, causal (the default).
  const AttentionShape call{16, 4096, 4096, 128, true};
  int kernels = 0;
  for (const auto& steps : {transformer_layer_forward(shape), transformer_layer_backward(shape)})
    for (const auto& step : steps) {
      const auto* op = std::get_if<ComputeOp>(&step);
      if (!op || op->name.rfind("attn.flash", 0) != 0) continue;
      ++kernels;
      CHECK(op->kind == (op->name == "attn.flash" ? OpKind::flash_forward : OpKind::flash_backward));
      REQUIRE(op->attention.has_value());
      CHECK(*op->attention == call);
    }
  CHECK(kernels == 3); // attn.flash, attn.flash.bwd.recompute, attn.flash.bwd
}

TEST_CASE("fused attention moves no s^2 data through HBM") {
  const auto m = gpt(4096, 32, 4096);
  const double b = 2, s = 4096, a = 32, t = 4;
  const auto unfused = transformer_layer_forward(LayerShape::of(m, plan_of(AttentionKernel::unfused)));
  const auto fused = transformer_layer_forward(LayerShape::of(m, plan_of(AttentionKernel::fused)));
  const double scores = b * a / t * s * s; // elements of the s x s scores of this rank
  CHECK(bytes_of(unfused, "attn.softmax") == doctest::Approx(4 * scores));
  CHECK(bytes_of(fused, "attn.flash") < 0.2 * bytes_of(unfused, "attn.softmax"));
  const auto fused_backward = transformer_layer_backward(LayerShape::of(m, plan_of(AttentionKernel::fused)));
  CHECK(bytes_of(fused_backward, "attn.flash") < 0.2 * bytes_of(unfused, "attn.softmax"));
  // Its HBM traffic grows linearly with the sequence, the unfused path's quadratically.
  const auto longer = transformer_layer_forward(LayerShape::of(gpt(4096, 32, 8192), plan_of(AttentionKernel::fused)));
  CHECK(bytes_of(longer, "attn.flash") / bytes_of(fused, "attn.flash") == doctest::Approx(2).epsilon(1e-9));
}

TEST_CASE("fused attention drops the 5as/h activation term (Korthikanti et al. Table 2)") {
  const auto m = gpt(4096, 32, 2048);
  const auto unfused = estimate_memory(m, plan_of(AttentionKernel::unfused)).stages[0].breakdown.activations;
  const auto fused = estimate_memory(m, plan_of(AttentionKernel::fused)).stages[0].breakdown.activations;
  const auto selective =
      estimate_memory(m, plan_of(AttentionKernel::unfused, Recompute::selective)).stages[0].breakdown.activations;
  const double sbh = 2048.0 * 2 * 4096, a = 32, s = 2048, h = 4096, t = 4;
  const double layers = 4;
  CHECK((unfused - fused).value() == doctest::Approx(layers * sbh * (5 * a * s / h - 4 * a / h) / t).epsilon(1e-9));
  // What is left is what selective recomputation keeps, plus the fp32 softmax statistics.
  CHECK((fused - selective).value() == doctest::Approx(layers * sbh * 4 * a / h / t).epsilon(1e-9));
}
