// training.recompute_layers in the lowered iteration: only each chunk's first N layers run a
// recompute pass (Megatron-LM's block method, megatron/core/recompute.py).
#include <doctest/doctest.h>

#include <set>

#include <twocs/cost/roofline.hpp>
#include <twocs/lowering/lower_iteration.hpp>
#include <twocs/model/layer_ops.hpp>

#include "support/scenarios.hpp"

using namespace twocs;
using namespace twocs::lowering;

namespace {

struct RecomputePasses {
  std::set<int> layers;
  std::size_t kernels = 0;
};

RecomputePasses recompute_passes(const model::TransformerConfig& m, const model::TrainingPlan& plan) {
  const cost::RooflineCostModel cost(testing::a100());
  const TaskGraph g = lower_iteration(m, plan, cost);
  REQUIRE(g.is_acyclic());
  RecomputePasses out;
  for (TaskId id = 0; id < g.size(); ++id) {
    const Task& t = g.task(id);
    if (t.pass != model::Pass::recompute) continue;
    out.layers.insert(t.layer);
    ++out.kernels;
  }
  return out;
}

} // namespace

TEST_CASE("recompute_layers: 1 recomputes the first layer of each interleaved chunk, once per micro-batch") {
  const auto m = testing::gpt(8, 256, 8, 128, 1024);
  auto plan = testing::plan_of(1, 2, 1, 4);
  plan.parallelism.virtual_stages = 2;
  plan.pipeline_schedule = model::PipelineSchedule::interleaved_one_f_one_b;
  plan.attention = model::AttentionKernel::unfused; // FlashAttention's backward has its own recompute kernel
  plan.recompute = model::Recompute::full;
  plan.recompute_layers = 1;
  const auto block = recompute_passes(m, plan);
  CHECK(block.layers == std::set<int>{0, 2, 4, 6});
  const auto per_layer = model::transformer_layer_forward(model::LayerShape::of(m, plan)).size(); // t = 1: kernels only
  const std::size_t micro_batches = 4, chunks = 4;
  CHECK(block.kernels == chunks * micro_batches * per_layer); // one recomputed layer per chunk
  plan.recompute_layers = 0;
  const auto every = recompute_passes(m, plan);
  CHECK(every.layers == std::set<int>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(every.kernels == std::size_t{8} * micro_batches * per_layer);
  plan.recompute_layers = 2; // a chunk's every layer
  CHECK(recompute_passes(m, plan).kernels == every.kernels);
}
