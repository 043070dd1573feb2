// PyTorch FSDP2's copies (framework: fsdp, sharding: full): a copy-out after each layer's
// all-gather, forward and backward, and a copy-in before each layer's reduce-scatter, each a
// memory-bound kernel whose bytes follow from the layer's parameters.
#include <doctest/doctest.h>

#include <string_view>

#include <twocs/cost/roofline.hpp>
#include <twocs/lowering/lower_iteration.hpp>
#include <twocs/model/parameters.hpp>

#include "support/scenarios.hpp"

using namespace twocs;
using namespace twocs::lowering;

namespace {

struct Copies {
  int count = 0;
  double bytes = 0; // of one
};

Copies copies_on_0(const TaskGraph& g, std::string_view label) {
  Copies out;
  for (TaskId id = 0; id < g.size(); ++id) {
    const Task& t = g.task(id);
    if (!t.is_kernel() || t.device != 0 || g.label(t.label) != label) continue;
    ++out.count;
    out.bytes = g.kernel(id).bytes.value();
  }
  return out;
}

} // namespace

TEST_CASE("FSDP2 copies each layer out of its all-gather twice per micro-batch and into its reduce-scatter once") {
  const auto m = testing::gpt(4, 256, 8, 128, 1024);
  const cost::RooflineCostModel cost(testing::a100());
  auto plan = testing::plan_of(1, 1, 4, 2);
  plan.optimizer.sharding = model::OptimizerSharding::full;
  plan.framework = model::Framework::fsdp;
  const double layer = static_cast<double>(model::count_parameters(m, 1).per_layer);
  const TaskGraph g = lower_iteration(m, plan, cost);
  // 4 layers x 2 micro-batches, forward and backward: bf16 weights read and written.
  const Copies out = copies_on_0(g, "fsdp.all_gather.copy_out");
  CHECK(out.count == 4 * 2 * 2);
  CHECK(out.bytes == doctest::Approx(2.0 * 2.0 * layer));
  // Backward only: bf16 gradients read, fp32 reduce-scatter input written.
  const Copies in = copies_on_0(g, "fsdp.reduce_scatter.copy_in");
  CHECK(in.count == 4 * 2);
  CHECK(in.bytes == doctest::Approx((2.0 + 4.0) * layer));
  // Megatron-LM's ZeRO-3-like sharding and an unsharded FSDP run have neither.
  plan.framework = model::Framework::megatron_lm;
  CHECK(copies_on_0(lower_iteration(m, plan, cost), "fsdp.all_gather.copy_out").count == 0);
  plan.framework = model::Framework::fsdp;
  plan.optimizer.sharding = model::OptimizerSharding::none;
  CHECK(copies_on_0(lower_iteration(m, plan, cost), "fsdp.reduce_scatter.copy_in").count == 0);
}
