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
