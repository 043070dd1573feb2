// Which steps of a layer Megatron-Core's per-layer CUDA graphs capture (LayerGraph; src/model/
// layer_graph.hpp): a dense layer whole; a MoE layer's forward up to its router and
// preprocessing, its backward from their gradients on; the dispatch, experts and combine never.
#include <doctest/doctest.h>

#include <string>
#include <variant>

#include <twocs/model/layer_ops.hpp>

#include "support/modern_models.hpp"
#include "support/moe_layer_shape.hpp"
#include "support/step_lookup.hpp"

using namespace twocs::model;
using twocs::testing::find_step;
using twocs::testing::step_index;
using twocs::testing::step_name;

namespace {

LayerGraph graph_of(const Step& step) {
  return std::visit([](const auto& op) { return op.graph; }, step);
}

LayerGraph graph_at(const StepSequence& steps, const std::string& name) {
  return graph_of(steps[step_index(steps, name)]);
}

LayerShape moe_shape(ExpertDispatcher dispatcher = ExpertDispatcher::all_to_all) {
  LayerShape shape = twocs::testing::moe_layer_shape(twocs::testing::qwen3_235b(), 8);
  shape.expert_dispatcher = dispatcher;
  return shape;
}

/// The index of the first step marked `mark`, or the size.
std::size_t first_marked(const StepSequence& steps, LayerGraph mark) {
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (graph_of(steps[i]) == mark) return i;
  return steps.size();
}

} // namespace

TEST_CASE("a dense layer's forward, recomputation and backward are captured whole") {
  LayerShape shape;
  shape.model = twocs::testing::qwen3_235b();
  shape.model.moe.reset();
  shape.tensor = 4;
  shape.sequence_parallel = true;
  for (const auto& steps : {transformer_layer_forward(shape), transformer_layer_backward(shape),
                            transformer_layer_recompute(shape, Recompute::full)}) {
    REQUIRE_FALSE(steps.empty());
    for (const auto& step : steps) {
      CAPTURE(step_name(step));
      CHECK(graph_of(step) == LayerGraph::captured); // the tensor-parallel collectives too
    }
  }
}

TEST_CASE("a MoE layer's graph ends before the dispatch's host synchronisation") {
  const auto forward = transformer_layer_forward(moe_shape());
  // attention, router and preprocessing (moe_router, moe_preprocess): the count exchange included
  for (const char* name : {"attn.qkv", "mlp.norm", "moe.router", "moe.router.topk", "moe.permute"})
    CHECK(graph_at(forward, name) == LayerGraph::captured);
  CHECK(graph_at(forward, "moe.dispatch.counts.all_gather") == LayerGraph::captured);
  const std::size_t sync = step_index(forward, "moe.dispatch.host_sync");
  CHECK(first_marked(forward, LayerGraph::excluded) == sync);
  for (const char* name : {"moe.dispatch.all_to_all", "moe.experts.fc1", "moe.combine.all_to_all", "moe.unpermute"})
    CHECK(graph_at(forward, name) == LayerGraph::excluded);
  CHECK(graph_at(forward, "mlp.residual") == LayerGraph::eager); // after the graph's early return
}

TEST_CASE("a MoE layer's backward graph starts at the permutation's gradient") {
  const auto backward = transformer_layer_backward(moe_shape());
  CHECK(graph_at(backward, "mlp.residual.bwd") == LayerGraph::eager);
  for (const char* name : {"moe.unpermute.bwd", "moe.experts.fc2.dgrad", "moe.dispatch.bwd.all_to_all"})
    CHECK(graph_at(backward, name) == LayerGraph::excluded);
  const std::size_t permute = step_index(backward, "moe.permute.bwd");
  for (std::size_t i = permute; i < backward.size(); ++i) {
    CAPTURE(step_name(backward[i]));
    CHECK(graph_of(backward[i]) == LayerGraph::captured);
  }
}

TEST_CASE("DeepEP permutes after its dispatch, and a dropping router keeps the preprocessing eager") {
  const auto deepep = transformer_layer_forward(moe_shape(ExpertDispatcher::deepep));
  CHECK(graph_at(deepep, "moe.router.topk") == LayerGraph::captured);
  CHECK(graph_at(deepep, "moe.permute") == LayerGraph::excluded);
  CHECK(graph_at(transformer_layer_backward(moe_shape(ExpertDispatcher::deepep)), "moe.permute.bwd") ==
        LayerGraph::excluded);
  auto dropping = moe_shape();
  dropping.model.moe->capacity_factor = 1.25;
  const auto forward = transformer_layer_forward(dropping);
  CHECK(graph_at(forward, "moe.permute") == LayerGraph::excluded);
  CHECK(graph_at(forward, "moe.dispatch.counts.all_gather") == LayerGraph::excluded);
}

TEST_CASE("a sync-free dispatcher has no host synchronisation, and the recomputed expert activation is excluded") {
  auto shape = moe_shape(ExpertDispatcher::deepep);
  shape.sync_free_dispatch = true;
  CHECK_FALSE(find_step(transformer_layer_forward(shape), "moe.dispatch.host_sync"));
  CHECK(find_step(transformer_layer_forward(moe_shape(ExpertDispatcher::deepep)), "moe.dispatch.host_sync"));
  RecomputeModules modules = no_recompute_modules();
  modules.moe_act = true;
  modules.layernorm = true;
  const auto recompute = transformer_layer_recompute(moe_shape(), Recompute::selective, modules);
  CHECK(graph_at(recompute, "mlp.norm") == LayerGraph::captured);
  CHECK(graph_of(recompute.back()) == LayerGraph::excluded);
}
