// A mixture-of-experts iteration end to end: expert-parallel all-to-alls show up as their own
// communication kind, and a skewed router slows the iteration by the busiest rank's extra work.
#include <doctest/doctest.h>

#include <twocs/model/memory.hpp>
#include <twocs/model/parameters.hpp>

#include <twocs/platform/collective_context.hpp>

#include "support/iteration_run.hpp"
#include "support/scenarios.hpp"

using namespace twocs;

namespace {

model::TransformerConfig small_moe(double imbalance) {
  auto m = testing::gpt(2, 1024, 16, 1024);
  m.ffn_kind = model::FfnKind::swiglu;
  m.moe = model::MoeConfig{8, 2, 1024, 0, 0, 0, imbalance};
  return m;
}

using Run = testing::IterationRun;

Run simulate(const model::TransformerConfig& m, const model::TrainingPlan& plan, bool fold = false) {
  return testing::simulate_iteration(m, plan, 4, fold);
}

model::TrainingPlan expert_plan() {
  auto plan = testing::plan_of(1, 1, 4, 2);
  plan.parallelism.expert = 4;
  return plan;
}

} // namespace

TEST_CASE("expert parallelism sends the dispatch and combine all-to-alls on the expert stream") {
  const auto run = simulate(small_moe(1.0), expert_plan());
  std::size_t all_to_all_bytes = 0, count_bytes = 0;
  for (lowering::TaskId id = 0; id < run.graph.size(); ++id)
    if (run.graph.task(id).is_transfer() && run.graph.transfer(id).group == model::CommGroup::expert) {
      const auto bytes = static_cast<std::size_t>(run.graph.transfer(id).bytes.value());
      const bool counts = run.graph.label(run.graph.task(id).label).rfind("moe.dispatch.counts", 0) == 0;
      (counts ? count_bytes : all_to_all_bytes) += bytes;
    }
  // The dispatcher's token-count all-gather, once per layer and micro-batch in the forward: each
  // rank sends the 3 other ranks' worth of 8 experts x 8 bytes around the ring.
  CHECK(static_cast<double>(count_bytes) == doctest::Approx(3 * 8 * 8 * 4 * 2 * 2).epsilon(1e-9));
  // Per layer and micro-batch, 4 all-to-alls (2 forward, 2 backward) of T k h e bytes per rank,
  // of which (n - 1) / n leaves the rank: 4 ranks x 2 layers x 2 micro-batches.
  const double per_rank = 1024.0 * 2 * 1024 * 2 * 3 / 4;
  CHECK(static_cast<double>(all_to_all_bytes) == doctest::Approx(4 * per_rank * 4 * 2 * 2).epsilon(1e-9));
  CHECK(run.summary.comm_busy_by_group[analysis::index(model::CommGroup::expert)].value() > 0);
  CHECK(run.summary.comm_busy_by_group[analysis::index(model::CommGroup::data)].value() > 0);
}

TEST_CASE("a skewed router slows the iteration by the busiest expert's extra grouped-GEMM time") {
  const auto balanced = simulate(small_moe(1.0), expert_plan());
  const auto skewed = simulate(small_moe(2.0), expert_plan());
  double balanced_expert = 0, skewed_expert = 0;
  const auto expert_time = [](const Run& run) {
    double t = 0;
    for (lowering::TaskId id = 0; id < run.graph.size(); ++id)
      if (!run.graph.task(id).is_transfer() && run.graph.task(id).device == 0 &&
          run.graph.label(run.graph.task(id).label).rfind("moe.experts.fc", 0) == 0)
        t += run.graph.kernel(id).duration.value();
    return t;
  };
  balanced_expert = expert_time(balanced);
  skewed_expert = expert_time(skewed);
  CHECK(skewed_expert > 1.5 * balanced_expert);
  // The iteration grows by at least the busiest rank's extra expert time (nothing overlaps it).
  CHECK(skewed.summary.iteration_time.value() - balanced.summary.iteration_time.value() >=
        0.99 * (skewed_expert - balanced_expert));
  // Model FLOPs do not grow with skew: the extra rows are not model work.
  CHECK(skewed.summary.model_flops.value() == doctest::Approx(balanced.summary.model_flops.value()));
}

TEST_CASE("folding replicas keeps the direct all-to-all exact: the simulated member sends to and receives from all") {
  const auto full = simulate(small_moe(1.0), expert_plan(), false);
  const auto folded = simulate(small_moe(1.0), expert_plan(), true);
  CHECK(folded.graph.size() < full.graph.size());
  CHECK(folded.summary.iteration_time.value() == doctest::Approx(full.summary.iteration_time.value()).epsilon(1e-9));
  const auto expert = analysis::index(model::CommGroup::expert);
  CHECK(folded.summary.comm_busy_by_group[expert].value() ==
        doctest::Approx(full.summary.comm_busy_by_group[expert].value()).epsilon(1e-9));
  // Expert gradients reduced over tensor x data ranks (t = 2, d = 2, ep = 2) fold as exactly.
  auto tp_plan = testing::plan_of(2, 1, 2, 2);
  tp_plan.parallelism.expert = 2;
  tp_plan.parallelism.sequence = true;
  CHECK(simulate(small_moe(1.0), tp_plan, true).summary.iteration_time.value() ==
        doctest::Approx(simulate(small_moe(1.0), tp_plan, false).summary.iteration_time.value()).epsilon(1e-9));
}

TEST_CASE("DeepEP sends each token once per destination rank and exchanges its counts inside the dispatch") {
  auto plan = expert_plan();
  plan.parallelism.expert_dispatcher = model::ExpertDispatcher::deepep;
  const auto run = simulate(small_moe(1.0), plan);
  double all_to_all_bytes = 0, count_bytes = 0;
  for (lowering::TaskId id = 0; id < run.graph.size(); ++id)
    if (run.graph.task(id).is_transfer() && run.graph.transfer(id).group == model::CommGroup::expert) {
      const bool counts = run.graph.label(run.graph.task(id).label).rfind("moe.dispatch.counts", 0) == 0;
      (counts ? count_bytes : all_to_all_bytes) += run.graph.transfer(id).bytes.value();
    }
  CHECK(count_bytes == 0);
  // 8 experts top 2 over 4 ranks of one node (2 experts each): a token reaches a given rank with
  // 1 - C(6, 2) / C(8, 2) = 13 / 28, so each rank sends T h e x 13/28 to each of 3 peers, in 4
  // all-to-alls per layer and micro-batch: 4 ranks x 2 layers x 2 micro-batches.
  const double per_rank = 1024.0 * 1024 * 2 * 3 * 13.0 / 28.0;
  CHECK(all_to_all_bytes == doctest::Approx(4 * per_rank * 4 * 2 * 2).epsilon(1e-9));
  // Folded, the dispatch is lowered whole over the group: the same iteration.
  CHECK(simulate(small_moe(1.0), plan, true).summary.iteration_time.value() ==
        doctest::Approx(run.summary.iteration_time.value()).epsilon(1e-9));
  // Fewer bytes than the all-to-all dispatcher's k copies: a faster iteration.
  CHECK(run.summary.iteration_time < simulate(small_moe(1.0), expert_plan()).summary.iteration_time);
}

TEST_CASE("DeepEP across two nodes: the folded member's side stands for every member's") {
  // 8 ranks on 2 nodes of 4, EP 8: network messages to the same local index, NVLink inside.
  auto plan = testing::plan_of(1, 1, 8, 2);
  plan.parallelism.expert = 8;
  plan.parallelism.expert_dispatcher = model::ExpertDispatcher::deepep;
  const auto m = small_moe(1.0);
  model::validate(m, plan);
  const auto cluster = testing::cluster_of(2, 4);
  const cost::RooflineCostModel cost(cluster.device);
  const auto time = [&](bool fold) {
    lowering::LoweringOptions options;
    options.fold_replicas = fold;
    options.collectives = platform::collective_policy(cluster, plan.world_size());
    const auto graph = lowering::lower_iteration(m, plan, cost, options);
    const auto timeline = engine::simulate(graph, platform::build_topology(cluster, plan.world_size()));
    return analysis::summarize(graph, timeline, m, plan, cluster).iteration_time.value();
  };
  CHECK(time(true) == doctest::Approx(time(false)).epsilon(1e-6));
}

namespace {

/// Bytes device 0 sends for the data-parallel gradient reduction ("grad." transfers).
double gradient_bytes_sent(const Run& run) {
  double bytes = 0;
  for (lowering::TaskId id = 0; id < run.graph.size(); ++id) {
    const auto& task = run.graph.task(id);
    if (task.is_transfer() && task.device == 0 && run.graph.label(task.label).rfind("grad.", 0) == 0)
      bytes += run.graph.transfer(id).bytes.value();
  }
  return bytes;
}

} // namespace

TEST_CASE("expert gradients are reduced over the t d / ep ranks that hold the same experts (Megatron-Core)") {
  const auto m = small_moe(1.0);
  // bf16 gradients reduced in fp32 (4 bytes) with a ring all-reduce: each rank sends 2 (n - 1) / n
  // of the bytes. The tensor-split dense parameters span the d replicas; the experts, whole on
  // every tensor-parallel rank, the t d / ep ranks holding them.
  const auto ring = [](double bytes, double n) { return n > 1 ? 2 * (n - 1) / n * bytes : 0.0; };
  struct Plan {
    std::int64_t t, d, ep;
  };
  for (const Plan p : {Plan{1, 4, 1}, Plan{1, 4, 2}, Plan{1, 4, 4}, Plan{2, 2, 1}, Plan{2, 2, 2}}) {
    INFO("t = " << p.t << ", d = " << p.d << ", ep = " << p.ep);
    auto plan = testing::plan_of(p.t, 1, p.d, 2);
    plan.parallelism.expert = p.ep;
    plan.parallelism.sequence = p.t > 1;
    const auto counts = model::count_parameters(m, p.t, p.ep);
    const double experts = 2.0 * static_cast<double>(counts.expert_per_layer);
    const double dense = static_cast<double>(counts.total(2)) - experts;
    const double expert_ranks = static_cast<double>(p.t * p.d) / static_cast<double>(p.ep);
    CHECK(gradient_bytes_sent(simulate(m, plan)) ==
          doctest::Approx(ring(4 * dense, static_cast<double>(p.d)) + ring(4 * experts, expert_ranks)));
  }
}

TEST_CASE("the distributed optimizer shards expert state over t d / ep ranks, the rest over d") {
  const auto m = small_moe(1.0);
  auto plan = testing::plan_of(1, 1, 4, 2);
  plan.optimizer.sharding = model::OptimizerSharding::optimizer;
  plan.parallelism.expert = 4;
  const auto counts = model::count_parameters(m, 1, 4);
  const double experts = 2.0 * static_cast<double>(counts.expert_per_layer);
  const double dense = static_cast<double>(counts.total(2)) - experts;
  // Adam's fp32 master weights, momentum and variance: 12 bytes per parameter (ZeRO, section 3.1).
  const auto memory = model::estimate_memory(m, plan);
  CHECK(memory.stages[0].breakdown.optimizer_state.value() == doctest::Approx(12 * (dense / 4 + experts / 1)));
  // With t = 2 over d = 2 and ep = 2, both tensor-parallel ranks hold the experts: 2 ranks share them.
  auto tp_plan = testing::plan_of(2, 1, 2, 2);
  tp_plan.optimizer.sharding = model::OptimizerSharding::optimizer;
  tp_plan.parallelism.expert = 2;
  tp_plan.parallelism.sequence = true;
  const auto tp_counts = model::count_parameters(m, 2, 2);
  const double tp_experts = 2.0 * static_cast<double>(tp_counts.expert_per_layer);
  const double tp_dense = static_cast<double>(tp_counts.total(2)) - tp_experts;
  CHECK(model::estimate_memory(m, tp_plan).stages[0].breakdown.optimizer_state.value() ==
        doctest::Approx(12 * (tp_dense / 2 + tp_experts / 2)));
}
