// Multi-token prediction (model.mtp_layers; DeepSeek-V3 report, section 2.2; Megatron-Core's
// MultiTokenPredictionLayer): each depth runs on the last pipeline stage, after the model's
// layers, as an embedding of the shifted tokens, a 2h -> h projection, one transformer layer and
// a loss through the shared output layer; the last stage keeps its own copy of an untied
// embedding, whose gradient is all-reduced with the first stage's.
#include <doctest/doctest.h>

#include <string_view>

#include <twocs/cost/roofline.hpp>
#include <twocs/lowering/lower_iteration.hpp>
#include <twocs/model/layer_ops.hpp>
#include <twocs/model/memory.hpp>

#include "support/scenarios.hpp"

using namespace twocs;

namespace {

std::size_t tasks_labelled(const lowering::TaskGraph& g, std::string_view label, int device = -1) {
  std::size_t n = 0;
  for (lowering::TaskId id = 0; id < g.size(); ++id)
    n += g.label_of(id) == label && (device < 0 || g.task(id).device == device) ? 1 : 0;
  return n;
}

/// Bytes of device `device`'s Adam kernel: 28 per parameter it updates (embedding_head.cpp).
double adam_parameters(const lowering::TaskGraph& g, int device) {
  for (lowering::TaskId id = 0; id < g.size(); ++id)
    if (g.label_of(id) == "optimizer.adam" && g.task(id).device == device) return g.kernel(id).bytes.value() / 28.0;
  return 0;
}

model::TransformerConfig mtp_gpt(std::int64_t depths) {
  auto m = testing::gpt(4, 256, 8, 128, 1024);
  m.tied_embeddings = false;
  m.mtp_layers = depths;
  return m;
}

} // namespace

TEST_CASE("each multi-token-prediction depth runs on the last stage, once per micro-batch") {
  const auto plan = testing::plan_of(1, 2, 1, 3); // 2 stages: layers 0-1 and 2-3, 3 micro-batches
  const cost::RooflineCostModel cost(testing::a100());
  const auto g = lowering::lower_iteration(mtp_gpt(2), plan, cost);
  CHECK(tasks_labelled(g, "mtp.eh_proj", 1) == 2 * 3);
  CHECK(tasks_labelled(g, "mtp.eh_proj", 0) == 0);
  CHECK(tasks_labelled(g, "mtp.head.logits", 1) == 2 * 3);
  CHECK(tasks_labelled(g, "head.logits", 1) == 3);
  // Each depth's transformer layer comes on top of the model's 4.
  CHECK(tasks_labelled(g, "attn.qkv") == (4 + 2) * 3);
  CHECK(tasks_labelled(g, "attn.qkv", 1) == (2 + 2) * 3);
  const auto none = lowering::lower_iteration(mtp_gpt(0), plan, cost);
  CHECK(tasks_labelled(none, "mtp.eh_proj") == 0);
  CHECK(tasks_labelled(none, "attn.qkv") == 4 * 3);
}

TEST_CASE("an untied embedding's copy on the last stage is updated there and its gradient all-reduced") {
  const auto plan = testing::plan_of(1, 2, 1, 1);
  const cost::RooflineCostModel cost(testing::a100());
  const auto with = lowering::lower_iteration(mtp_gpt(1), plan, cost);
  const auto without = lowering::lower_iteration(mtp_gpt(0), plan, cost);
  // Megatron-Core all-reduces the word embedding's gradient between the first and last stages
  // when their weights are shared or multi-token prediction embeds on the last stage.
  CHECK(tasks_labelled(with, "embedding.grad.all_reduce") > 0);
  CHECK(tasks_labelled(without, "embedding.grad.all_reduce") == 0);
  // The last stage updates layers 2-3, the depth's layer, its enorm, hnorm, final norm (LayerNorm:
  // 2h each) and eh_proj (2h x h), the final norm, the untied output layer and the embedding copy
  // (V h words and s h learned positions). GPT layer: 12 h^2 + 13 h (Narayanan et al. SC'21, 5.1).
  const double h = 256, v = 1024, s = 128;
  const double layer = 12 * h * h + 13 * h;
  const double block = 3 * 2 * h + 2 * h * h;
  const double last_without = 2 * layer + 2 * h + v * h;
  CHECK(adam_parameters(without, 1) == doctest::Approx(last_without));
  CHECK(adam_parameters(with, 1) == doctest::Approx(last_without + layer + block + v * h + s * h));
  // The first stage is untouched.
  CHECK(adam_parameters(with, 0) == doctest::Approx(adam_parameters(without, 0)));
  // The memory model holds the same weights: 2 bytes each (bf16), 16 more each of gradients and state.
  const auto memory = model::estimate_memory(mtp_gpt(1), plan);
  CHECK(memory.stages[1].breakdown.weights.value() == doctest::Approx(2 * adam_parameters(with, 1)));
}

TEST_CASE("with tied embeddings a depth reports no second copy of the shared weight") {
  auto m = mtp_gpt(1);
  m.tied_embeddings = true;
  const auto plan = testing::plan_of(1, 2, 1, 1);
  const cost::RooflineCostModel cost(testing::a100());
  const auto g = lowering::lower_iteration(m, plan, cost);
  const double h = 256, v = 1024;
  const double layer = 12 * h * h + 13 * h;
  // Layers 2-3, the depth (layer and block), the final norm and the tied word embedding's copy.
  CHECK(adam_parameters(g, 1) == doctest::Approx(3 * layer + (3 * 2 * h + 2 * h * h) + 2 * h + v * h));
}

TEST_CASE("a depth's projection moves the 2h-wide input over the tensor group") {
  auto plan = testing::plan_of(2, 1, 1, 1);
  plan.parallelism.sequence = true;
  const model::LayerShape shape = model::LayerShape::of(mtp_gpt(1), plan);
  double gathered = 0, scattered = 0;
  for (const auto& step : model::mtp_input_forward(shape))
    if (const auto* op = std::get_if<model::CollectiveOp>(&step); op && op->name == "mtp.eh_proj.all_gather")
      gathered = op->size.value();
  for (const auto& step : model::mtp_input_backward(shape, true))
    if (const auto* op = std::get_if<model::CollectiveOp>(&step); op && op->name == "mtp.eh_proj.reduce_scatter")
      scattered = op->size.value();
  const double bsh_bytes = 1 * 128 * 256 * 2.0; // b s h in bf16
  CHECK(gathered == doctest::Approx(2 * bsh_bytes));
  CHECK(scattered == doctest::Approx(2 * bsh_bytes));
}
