// Megatron-Core's MoE overlaps as step sequences: the shared experts' halves under the dispatch
// and the combine (--moe-shared-expert-overlap) and the experts' weight gradients under the
// dispatch's backward (--overlap-dispatch-backward-with-experts-wgrad). Same kernels, reordered,
// with each all-to-all letting exactly the moved kernels run before its result is needed.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <variant>
#include <vector>

#include <twocs/model/layer_ops.hpp>

#include "support/modern_models.hpp"
#include "support/moe_layer_shape.hpp"
#include "support/step_lookup.hpp"

using namespace twocs::model;

namespace {

using twocs::testing::step_index;
using twocs::testing::step_name;

/// DeepSeek-V3's MoE shape at a small scale: 64 experts, top 6, one shared expert.
TransformerConfig shared_moe() {
  auto m = twocs::testing::qwen3_235b();
  m.moe->experts = 64;
  m.moe->top_k = 6;
  m.moe->shared_experts = 1;
  return m;
}

LayerShape overlap_shape(const TransformerConfig& m, bool shared, bool wgrad) {
  LayerShape shape = twocs::testing::moe_layer_shape(m, 8);
  shape.tensor = 2;
  shape.sequence_parallel = true;
  shape.shared_expert_overlap = shared;
  shape.expert_wgrad_overlap = wgrad;
  return shape;
}

const CollectiveOp& collective_named(const StepSequence& steps, const std::string& name) {
  return std::get<CollectiveOp>(steps[step_index(steps, name)]);
}

/// The compute kernels strictly between the steps named `from` and `to`.
std::vector<std::string> kernels_between(const StepSequence& steps, const std::string& from, const std::string& to) {
  std::vector<std::string> names;
  for (std::size_t i = step_index(steps, from) + 1; i < step_index(steps, to); ++i)
    if (std::holds_alternative<ComputeOp>(steps[i])) names.push_back(step_name(steps[i]));
  return names;
}

std::vector<std::string> sorted_names(const StepSequence& steps) {
  std::vector<std::string> names;
  for (const auto& s : steps) names.push_back(step_name(s));
  std::sort(names.begin(), names.end());
  return names;
}

double total_flops(const StepSequence& steps) {
  double f = 0;
  for (const auto& s : steps)
    if (const auto* op = std::get_if<ComputeOp>(&s)) f += op->flops.value();
  return f;
}

} // namespace

TEST_CASE("shared-expert overlap runs fc1 under the dispatch and fc2 under the combine, forward") {
  const auto m = shared_moe();
  const auto plain = transformer_layer_forward(overlap_shape(m, false, false));
  const auto steps = transformer_layer_forward(overlap_shape(m, true, false));
  // fc1 and its SwiGLU between the dispatch and the routed experts, before the received chunks'
  // sort (dispatch_postprocess runs the shared fc1 first); the dispatch lets both run.
  const auto under_dispatch = kernels_between(steps, "moe.dispatch.all_to_all", "moe.experts.fc1");
  REQUIRE(under_dispatch.size() == 3);
  CHECK(under_dispatch.front() == "mlp.fc1");
  CHECK(under_dispatch.back() == "moe.dispatch.sort_chunks");
  CHECK(collective_named(steps, "moe.dispatch.all_to_all").overlapped_ops == 2);
  // The shared all-gather (sequence parallelism) is issued before the permutation and lets it
  // and the host's wait for the token counts run before fc1 needs it.
  CHECK(step_index(steps, "mlp.fc1.all_gather") < step_index(steps, "moe.permute"));
  CHECK(kernels_between(steps, "mlp.fc1.all_gather", "mlp.fc1") ==
        std::vector<std::string>{"moe.permute", "moe.dispatch.host_sync"});
  CHECK(collective_named(steps, "mlp.fc1.all_gather").overlapped_ops == 2);
  // fc2 under the combine; its reduce-scatter does not hold the unpermutation back.
  CHECK(kernels_between(steps, "moe.combine.all_to_all", "moe.unpermute") == std::vector<std::string>{"mlp.fc2"});
  CHECK(collective_named(steps, "moe.combine.all_to_all").overlapped_ops == 1);
  CHECK(collective_named(steps, "mlp.fc2.reduce_scatter").overlapped_ops == 1);
  // Without the overlap the shared MLP runs whole, before the router, and the exchanges block.
  CHECK(step_index(plain, "mlp.fc2") < step_index(plain, "moe.router"));
  CHECK(collective_named(plain, "moe.dispatch.all_to_all").overlapped_ops == 0);
  CHECK(collective_named(plain, "moe.combine.all_to_all").overlapped_ops == 0);
  // The same kernels and collectives, reordered.
  CHECK(sorted_names(steps) == sorted_names(plain));
  CHECK(total_flops(steps) == doctest::Approx(total_flops(plain)).epsilon(1e-12));
}

TEST_CASE("shared-expert overlap runs fc2's gradients under the combine's and fc1's under the dispatch's") {
  const auto m = shared_moe();
  const auto plain = transformer_layer_backward(overlap_shape(m, false, false));
  const auto steps = transformer_layer_backward(overlap_shape(m, true, false));
  const auto under_combine = kernels_between(steps, "moe.combine.bwd.all_to_all", "moe.experts.fc2.dgrad");
  CHECK(under_combine == std::vector<std::string>{"mlp.fc2.dgrad", "mlp.fc2.wgrad", "moe.combine.unsort_chunks.bwd"});
  CHECK(collective_named(steps, "moe.combine.bwd.all_to_all").overlapped_ops == 2);
  // fc2's output-gradient all-gather goes first, under the unpermutation's backward.
  CHECK(kernels_between(steps, "mlp.fc2.all_gather", "mlp.fc2.dgrad") == std::vector<std::string>{"moe.unpermute.bwd"});
  CHECK(collective_named(steps, "mlp.fc2.all_gather").overlapped_ops == 1);
  CHECK(collective_named(plain, "mlp.fc2.all_gather").overlapped_ops == 0);
  // The activation's backward and fc1's two GEMMs, with fc1's input-gradient reduce-scatter.
  const auto under_dispatch = kernels_between(steps, "moe.dispatch.bwd.all_to_all", "moe.permute.bwd");
  REQUIRE(under_dispatch.size() == 3);
  CHECK(under_dispatch[1] == "mlp.fc1.dgrad");
  CHECK(under_dispatch[2] == "mlp.fc1.wgrad");
  CHECK(collective_named(steps, "moe.dispatch.bwd.all_to_all").overlapped_ops == 3);
  CHECK(step_index(plain, "mlp.fc2.dgrad") > step_index(plain, "moe.router.wgrad"));
  CHECK(sorted_names(steps) == sorted_names(plain));
  CHECK(total_flops(steps) == doctest::Approx(total_flops(plain)).epsilon(1e-12));
}

TEST_CASE("delayed expert weight gradients run under the dispatch's backward all-to-all") {
  const auto m = twocs::testing::qwen3_235b(); // no shared experts
  const auto plain = transformer_layer_backward(overlap_shape(m, false, false));
  const auto steps = transformer_layer_backward(overlap_shape(m, false, true));
  CHECK(kernels_between(steps, "moe.dispatch.bwd.all_to_all", "moe.permute.bwd") ==
        std::vector<std::string>{"moe.experts.fc2.wgrad", "moe.experts.fc1.wgrad"});
  CHECK(collective_named(steps, "moe.dispatch.bwd.all_to_all").overlapped_ops == 2);
  // The input gradients still run back to back before the all-to-all (it needs fc1's dgrad, then
  // the inverse of the chunks' sort).
  const auto before = kernels_between(steps, "moe.experts.fc2.dgrad", "moe.dispatch.bwd.all_to_all");
  REQUIRE(before.size() >= 2);
  CHECK(before[before.size() - 2] == "moe.experts.fc1.dgrad");
  CHECK(before.back() == "moe.dispatch.sort_chunks.bwd");
  CHECK(collective_named(plain, "moe.dispatch.bwd.all_to_all").overlapped_ops == 0);
  CHECK(sorted_names(steps) == sorted_names(plain));
  // With shared experts as well: the shared fc1's backward first, then the delayed gradients.
  const auto both = transformer_layer_backward(overlap_shape(shared_moe(), true, true));
  const auto under = kernels_between(both, "moe.dispatch.bwd.all_to_all", "moe.permute.bwd");
  REQUIRE(under.size() == 5);
  CHECK(under[2] == "mlp.fc1.wgrad");
  CHECK(under[3] == "moe.experts.fc2.wgrad");
  CHECK(collective_named(both, "moe.dispatch.bwd.all_to_all").overlapped_ops == 5);
}

TEST_CASE("the MoE overlaps change nothing without shared experts or outside Megatron-Core") {
  const auto m = twocs::testing::qwen3_235b();
  const auto names = [](const StepSequence& steps) {
    std::vector<std::string> out;
    for (const auto& s : steps) out.push_back(step_name(s));
    return out;
  };
  CHECK(names(transformer_layer_forward(overlap_shape(m, true, false))) ==
        names(transformer_layer_forward(overlap_shape(m, false, false))));
  TrainingPlan plan;
  plan.overlap.shared_experts = true;
  plan.overlap.expert_wgrad = true;
  CHECK(LayerShape::of(shared_moe(), plan).shared_expert_overlap);
  CHECK(LayerShape::of(shared_moe(), plan).expert_wgrad_overlap);
  plan.framework = Framework::megatron_deepspeed;
  CHECK_FALSE(LayerShape::of(shared_moe(), plan).shared_expert_overlap);
  CHECK_FALSE(LayerShape::of(shared_moe(), plan).expert_wgrad_overlap);
}
