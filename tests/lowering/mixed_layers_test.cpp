// A model whose first moe.dense_layers layers are dense (DeepSeek-V3) lowers each layer by its
// kind: dense layers run fc1/fc2, the rest the router and experts, and their gradients count so.
#include <doctest/doctest.h>

#include <string_view>

#include <twocs/cost/roofline.hpp>
#include <twocs/lowering/lower_iteration.hpp>
#include <twocs/model/parameters.hpp>

#include "support/scenarios.hpp"

using namespace twocs;

namespace {

std::size_t tasks_labelled(const lowering::TaskGraph& g, std::string_view label) {
  std::size_t n = 0;
  for (lowering::TaskId id = 0; id < g.size(); ++id) n += g.label_of(id) == label ? 1 : 0;
  return n;
}

} // namespace

TEST_CASE("the first dense_layers layers run the dense MLP, the others the router, per micro-batch") {
  auto m = testing::gpt(4, 256, 8, 128, 1024);
  m.moe = model::MoeConfig{.experts = 4, .top_k = 2, .expert_ffn_hidden = 256};
  m.moe->dense_layers = 1;
  const auto plan = testing::plan_of(1, 2, 1, 3); // 2 stages: layers 0-1 and 2-3, 3 micro-batches
  const cost::RooflineCostModel cost(testing::a100());
  const auto g = lowering::lower_iteration(m, plan, cost);
  CHECK(tasks_labelled(g, "mlp.fc1") == 1 * 3);    // layer 0's forward, 3 micro-batches
  CHECK(tasks_labelled(g, "moe.router") == 3 * 3); // layers 1-3
  CHECK(tasks_labelled(g, "mlp.fc1.wgrad") == 1 * 3);
}

TEST_CASE("ZeRO-3 gathers each layer's own weights: a dense layer's, a MoE layer's dense part and its local experts") {
  auto m = testing::gpt(4, 256, 8, 128, 1024);
  m.moe = model::MoeConfig{.experts = 4, .top_k = 2, .expert_ffn_hidden = 256};
  m.moe->dense_layers = 1;
  const std::int64_t d = 4, ep = 2;
  auto plan = testing::plan_of(1, 1, d, 1); // one micro-batch
  plan.parallelism.expert = ep;
  plan.optimizer.sharding = model::OptimizerSharding::full;
  const cost::RooflineCostModel cost(testing::a100());
  const auto g = lowering::lower_iteration(m, plan, cost);
  double sent = 0; // bytes device 0 sends in the layer gathers
  for (lowering::TaskId id = 0; id < g.size(); ++id) {
    const auto& t = g.task(id);
    if (t.is_transfer() && t.device == 0 && g.label(t.label) == "params.all_gather.layer")
      sent += g.transfer(id).bytes.value();
  }
  // The dense layer holds GPT's 12 h^2 + 13 h (f = 4h; Narayanan et al. SC'21, section 5.1).
  const double h = 256;
  const auto counts = model::count_parameters(m, 1, ep);
  const double dense_layer = static_cast<double>(counts.dense_per_layer);
  CHECK(dense_layer == doctest::Approx(12 * h * h + 13 * h));
  // A MoE layer: its attention, norms and router over the 4 data ranks, its E / ep = 2 experts
  // over the t d / ep = 2 ranks that hold them.
  const double experts = static_cast<double>(counts.expert_per_layer);
  const double moe_rest = static_cast<double>(counts.per_layer) - experts;
  CHECK(experts == doctest::Approx(static_cast<double>(model::count_parameters(m, 1, 1).expert_per_layer) / ep));
  // 1 dense + 3 MoE layers, each gathered forward and backward, 2 bytes per weight; a ring
  // all-gather over n ranks sends (n - 1) / n of the buffer from each.
  const double ring_data = (d - 1.0) / d, ring_experts = 1.0 / 2.0;
  const double layers = ring_data * (dense_layer + 3 * moe_rest) + ring_experts * 3 * experts;
  CHECK(sent == doctest::Approx(2 * 2.0 * layers));
}
