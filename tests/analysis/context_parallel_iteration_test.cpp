// A context-parallel iteration end to end: ring exchanges, all-gathers and all-to-alls on the context stream
// with the closed-form bytes, Megatron-Core's rank order, gradients reduced over data x context,
// and folding exact.
#include <doctest/doctest.h>

#include <algorithm>

#include <twocs/lowering/rank_layout.hpp>

#include "support/iteration_run.hpp"
#include "support/scenarios.hpp"

using namespace twocs;

namespace {

model::TransformerConfig small_model() {
  auto m = testing::gpt(2, 1024, 16, 4096);
  m.kv_heads = 4;
  return m;
}

model::TrainingPlan context_plan(model::ContextComm comm, std::int64_t cp = 2, std::int64_t data = 2) {
  auto plan = testing::plan_of(1, 1, data, 2);
  plan.attention = model::AttentionKernel::fused;
  plan.parallelism.context = cp;
  plan.parallelism.context_comm = comm;
  return plan;
}

using Run = testing::IterationRun;

Run simulate(const model::TransformerConfig& m, const model::TrainingPlan& plan, bool fold = false) {
  return testing::simulate_iteration(m, plan, 8, fold);
}

/// Bytes device 0 sends on `group` over the iteration.
double sent_bytes(const lowering::TaskGraph& graph, model::CommGroup group) {
  double bytes = 0;
  for (lowering::TaskId id = 0; id < graph.size(); ++id)
    if (graph.task(id).is_transfer() && graph.task(id).device == 0 && graph.transfer(id).group == group)
      bytes += graph.transfer(id).bytes.value();
  return bytes;
}

} // namespace

TEST_CASE("ring context parallelism: each rank sends 3 (cp - 1) K/V blocks per layer and micro-batch") {
  const std::int64_t cp = 4;
  const auto run = simulate(small_model(), context_plan(model::ContextComm::ring, cp, 1));
  // Block: b (s / cp) kv_heads d_head x K and V x 2 bytes = 1 x 1024 x 4 x 64 x 2 x 2.
  const double block = 1024.0 * 4 * 64 * 2 * 2;
  // (cp - 1) forward + 2 (cp - 1) backward, 2 layers, 2 micro-batches.
  CHECK(sent_bytes(run.graph, model::CommGroup::context) == doctest::Approx(3.0 * (cp - 1) * block * 2 * 2));
  CHECK(run.summary.comm_busy_by_group[analysis::index(model::CommGroup::context)].value() > 0);
}

TEST_CASE("all-gather context parallelism: (cp - 1) / cp of cp blocks leave a rank per collective, three per layer") {
  const std::int64_t cp = 4;
  const auto run = simulate(small_model(), context_plan(model::ContextComm::all_gather, cp, 1));
  const double block = 1024.0 * 4 * 64 * 2 * 2;
  // Forward all-gather, backward all-gather and reduce-scatter, each sending (cp - 1) blocks on a ring.
  CHECK(sent_bytes(run.graph, model::CommGroup::context) == doctest::Approx(3.0 * (cp - 1) * block * 2 * 2));
}

TEST_CASE("Megatron-Core rank order tp-cp-dp-pp, the data group spans data x context") {
  const lowering::RankLayout layout(2, 2, 2, 1, 2); // t 2, d 2, p 2, ep 1, cp 2
  CHECK(layout.world_size() == 16);
  CHECK(layout.rank({1, 0, 0, 1}) == 3); // tp + t cp
  CHECK(layout.rank({0, 1, 0, 0}) == 4); // t cp dp
  CHECK(layout.rank({0, 0, 1, 0}) == 8); // t cp d pp
  const auto c = layout.coordinates(13); // 13 = 1 + 2 (0 + 2 (1 + 2 x 1))
  CHECK(c.tensor == 1);
  CHECK(c.context == 0);
  CHECK(c.data == 1);
  CHECK(c.pipeline == 1);
  CHECK(layout.group(0, model::CommGroup::context) == std::vector<lowering::DeviceId>{0, 2});
  CHECK(layout.group(0, model::CommGroup::data) == std::vector<lowering::DeviceId>{0, 2, 4, 6});
  CHECK(layout.group(9, model::CommGroup::tensor) == std::vector<lowering::DeviceId>{8, 9});
  // Expert groups: ep adjacent ranks of a pipeline stage (Megatron-Core's expert mesh, order
  // tp-cp-ep-dp-pp with expert-tensor-parallel size 1), tensor-parallel ranks first.
  const lowering::RankLayout moe(1, 2, 1, 2, 2);
  CHECK(moe.group(2, model::CommGroup::expert) == std::vector<lowering::DeviceId>{2, 3});
  const lowering::RankLayout tp_moe(2, 2, 2, 4, 1); // t 2, d 2, pp 2, ep 4: a stage is one group
  CHECK(tp_moe.group(1, model::CommGroup::expert) == std::vector<lowering::DeviceId>{0, 1, 2, 3});
  CHECK(tp_moe.group(6, model::CommGroup::expert) == std::vector<lowering::DeviceId>{4, 5, 6, 7});
}

TEST_CASE("gradients are reduced over data x context ranks") {
  auto plan = context_plan(model::ContextComm::ring, 2, 2);
  plan.overlap.dp_grad_reduce = false;
  const auto run = simulate(small_model(), plan);
  std::size_t members = 0;
  for (lowering::TaskId id = 0; id < run.graph.size(); ++id)
    if (run.graph.task(id).is_transfer() && run.graph.transfer(id).group == model::CommGroup::data)
      members = std::max<std::size_t>(members, static_cast<std::size_t>(run.graph.task(id).device) + 1);
  CHECK(members == 4); // all four ranks take part
  CHECK(run.summary.comm_busy_by_group[analysis::index(model::CommGroup::data)].value() > 0);
}

TEST_CASE("all-to-all context parallelism: (cp - 1) / cp of Q, K, V and the output leave a rank, twice over") {
  const std::int64_t cp = 4;
  const auto run = simulate(small_model(), context_plan(model::ContextComm::all_to_all, cp, 1));
  // Per rank and layer: Q (16 heads) and K, V (4 heads each) of s / cp = 1024 tokens and d = 64,
  // then the output (16 heads); backward the output and its gradient, then dQ, dK, dV.
  const double q = 1024.0 * 16 * 64 * 2, kv = 1024.0 * 4 * 64 * 2 * 2, out = 1024.0 * 16 * 64 * 2;
  const double per_layer = 2 * (q + kv) + 3 * out;
  // 2 layers, 2 micro-batches; a direct all-to-all sends each peer 1 / cp of the buffer.
  CHECK(sent_bytes(run.graph, model::CommGroup::context) ==
        doctest::Approx(per_layer * (cp - 1) / static_cast<double>(cp) * 2 * 2));
  CHECK(run.summary.exposed_comm_by_group[analysis::index(model::CommGroup::context)].value() > 0);
}

TEST_CASE("folding context-parallel replicas is exact: ring, all-gather and all-to-all") {
  for (const auto comm : {model::ContextComm::ring, model::ContextComm::all_gather, model::ContextComm::all_to_all}) {
    const auto plan = context_plan(comm, 2, 2);
    const auto full = simulate(small_model(), plan, false);
    const auto folded = simulate(small_model(), plan, true);
    CHECK(folded.graph.size() < full.graph.size());
    CHECK(folded.summary.iteration_time.value() == doctest::Approx(full.summary.iteration_time.value()).epsilon(1e-9));
    const auto context = analysis::index(model::CommGroup::context);
    CHECK(folded.summary.comm_busy_by_group[context].value() ==
          doctest::Approx(full.summary.comm_busy_by_group[context].value()).epsilon(1e-9));
  }
}

TEST_CASE("context parallelism keeps the iteration's model FLOPs and spreads them over cp times the devices") {
  const auto base = simulate(small_model(), context_plan(model::ContextComm::ring, 1, 2));
  const auto split = simulate(small_model(), context_plan(model::ContextComm::ring, 2, 2));
  CHECK(split.summary.world_size == 2 * base.summary.world_size);
  CHECK(split.summary.model_flops.value() == doctest::Approx(base.summary.model_flops.value()).epsilon(1e-9));
  // What device 0 runs as model work is half of what it ran without context parallelism.
  const auto device_model_flops = [](const lowering::TaskGraph& graph) {
    double f = 0;
    for (lowering::TaskId id = 0; id < graph.size(); ++id)
      if (!graph.task(id).is_transfer() && graph.task(id).device == 0 && graph.kernel(id).model_flops)
        f += graph.kernel(id).flops.value();
    return f;
  };
  CHECK(device_model_flops(split.graph) == doctest::Approx(device_model_flops(base.graph) / 2).epsilon(1e-9));
}

TEST_CASE("ring hand-overs hide under the attention steps: the context kind's time is mostly overlapped") {
  const auto run = simulate(small_model(), context_plan(model::ContextComm::ring, 4, 1));
  const auto context = analysis::index(model::CommGroup::context);
  const double overlapped = run.summary.overlapped_comm_by_group[context].value();
  CHECK(overlapped > 0);
  CHECK(overlapped > run.summary.exposed_comm_by_group[context].value());
  // The per-kind shares sum to the totals.
  double exposed_sum = 0, overlapped_sum = 0;
  for (const auto g : model::all_comm_groups) {
    exposed_sum += run.summary.exposed_comm_by_group[analysis::index(g)].value();
    overlapped_sum += run.summary.overlapped_comm_by_group[analysis::index(g)].value();
  }
  CHECK(overlapped_sum == doctest::Approx(run.summary.breakdown.overlapped_comm.value()));
  CHECK(exposed_sum == doctest::Approx(run.summary.breakdown.exposed_comm.value()));
}

TEST_CASE("fp8 training sends BF16 activations between pipeline stages, as bf16 training does") {
  const auto pipeline_bytes = [](model::Dtype dtype) {
    auto plan = testing::plan_of(1, 2, 1, 2);
    plan.attention = model::AttentionKernel::fused;
    plan.dtype = dtype;
    auto device = testing::cluster_of(1, 8).device;
    device.peak_flops[model::Dtype::fp8] = units::FlopRate(624e12); // an FP8-capable device
    const cost::RooflineCostModel cost(device);
    auto m = small_model();
    m.tied_embeddings = false; // no embedding all-reduce between the stages
    const auto graph = lowering::lower_iteration(m, plan, cost);
    return sent_bytes(graph, model::CommGroup::pipeline);
  };
  // Stage 0 sends b s h x 2 bytes per micro-batch forward: 2 micro-batches.
  CHECK(pipeline_bytes(model::Dtype::fp8) == doctest::Approx(2.0 * 4096 * 1024 * 2));
  CHECK(pipeline_bytes(model::Dtype::fp8) == doctest::Approx(pipeline_bytes(model::Dtype::bf16)));
}
