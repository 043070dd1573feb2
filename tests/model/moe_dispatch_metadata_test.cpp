// What the token dispatchers exchange before their dispatch: HybridEP's routing map all-gathered
// over the expert group and scanned, forward only; none for DeepEP, the all-to-all dispatcher
// (its token counts instead) or without expert parallelism.
#include <doctest/doctest.h>

#include <string>
#include <variant>

#include <twocs/model/layer_ops.hpp>

#include "support/modern_models.hpp"
#include "support/moe_layer_shape.hpp"
#include "support/step_lookup.hpp"

using namespace twocs::model;

namespace {

using twocs::testing::find_step;
using twocs::testing::qwen3_235b;
using twocs::testing::step_index;
using twocs::testing::step_name;

LayerShape hybridep_shape(std::int64_t expert, ExpertDispatcher dispatcher = ExpertDispatcher::hybridep) {
  LayerShape shape = twocs::testing::moe_layer_shape(qwen3_235b(), expert);
  shape.expert_dispatcher = dispatcher;
  return shape;
}

bool has_step(const StepSequence& steps, const std::string& name) {
  for (const auto& step : steps)
    if (step_name(step) == name) return true;
  return false;
}

} // namespace

TEST_CASE("HybridEP all-gathers the routing map over the expert group and scans it before its dispatch") {
  const auto forward = transformer_layer_forward(hybridep_shape(8));
  const std::size_t gather = step_index(forward, "moe.dispatch.routing_map.all_gather");
  const std::size_t scan = step_index(forward, "moe.dispatch.preprocess");
  const std::size_t sync = step_index(forward, "moe.dispatch.host_sync");
  const std::size_t dispatch = step_index(forward, "moe.dispatch.all_to_all");
  REQUIRE(dispatch < forward.size());
  // The map, then its scan, then the host's wait for the counts, then the dispatch.
  CHECK(gather + 1 == scan);
  CHECK(scan + 1 == sync);
  CHECK(sync + 1 == dispatch);
  const auto& map = std::get<CollectiveOp>(forward[gather]);
  CHECK(map.kind == Collective::all_gather);
  CHECK(map.group == CommGroup::expert);
  CHECK(map.overlapped_ops == 0); // the scan needs every rank's map
  // 4,096 tokens x 128 experts, one byte each, from each of the 8 ranks.
  const double gathered = 4096.0 * 128 * 8;
  CHECK(map.size.value() == doctest::Approx(gathered));
  const auto* preprocess = find_step(forward, "moe.dispatch.preprocess");
  REQUIRE(preprocess);
  CHECK(preprocess->bytes.value() == doctest::Approx(gathered)); // reads every map once
  CHECK(preprocess->flops.value() == 0);
  // Its scan, two memsets and the counts' padding: 1 + 0.55 x 2 (host_work.hpp).
  CHECK(preprocess->host_launches == doctest::Approx(1.0 + 0.55 * 2));
}

TEST_CASE("HybridEP's backward reuses the forward's handle: no routing map, no scan") {
  const auto backward = transformer_layer_backward(hybridep_shape(8));
  CHECK_FALSE(has_step(backward, "moe.dispatch.routing_map.all_gather"));
  CHECK_FALSE(find_step(backward, "moe.dispatch.preprocess"));
}

TEST_CASE("only HybridEP with expert parallelism exchanges a routing map") {
  for (const auto dispatcher : {ExpertDispatcher::all_to_all, ExpertDispatcher::deepep}) {
    const auto forward = transformer_layer_forward(hybridep_shape(8, dispatcher));
    CHECK_FALSE(has_step(forward, "moe.dispatch.routing_map.all_gather"));
    CHECK_FALSE(find_step(forward, "moe.dispatch.preprocess"));
  }
  const auto alone = transformer_layer_forward(hybridep_shape(1));
  CHECK_FALSE(has_step(alone, "moe.dispatch.routing_map.all_gather"));
  CHECK_FALSE(find_step(alone, "moe.dispatch.preprocess"));
}
