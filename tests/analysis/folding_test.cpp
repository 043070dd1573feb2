// Folding identical replicas (one simulated device per pipeline stage) must not change what a
// symmetric, non-blocking cluster reports: the folded and the full simulation agree.
#include <doctest/doctest.h>

#include <twocs/analysis/summarize.hpp>
#include <twocs/cost/roofline.hpp>
#include <twocs/engine/simulate.hpp>
#include <twocs/lowering/lower_iteration.hpp>
#include <twocs/lowering/task_count.hpp>
#include <twocs/platform/topology.hpp>

#include "support/scenarios.hpp"

using namespace twocs;

namespace {

using testing::cluster_of;

model::TransformerConfig gpt_small() { return testing::gpt(4, 1024, 16, 1024); }

struct Outcome {
  analysis::Summary summary;
  std::size_t tasks = 0;
};

Outcome simulate(const model::TrainingPlan& plan, const hardware::ClusterSpec& cluster, bool fold) {
  const auto model = gpt_small();
  const cost::RooflineCostModel cost(cluster.device);
  const auto graph = lowering::lower_iteration(model, plan, cost, {fold});
  CHECK(graph.is_acyclic());
  const auto timeline = engine::simulate(graph, platform::build_topology(cluster, plan.world_size()));
  return {analysis::summarize(graph, timeline, model, plan, cluster), graph.size()};
}

void check_same(const analysis::Summary& folded, const analysis::Summary& full) {
  const auto same = [](units::Seconds a, units::Seconds b) {
    CHECK(a.value() == doctest::Approx(b.value()).epsilon(1e-9).scale(1e-3));
  };
  same(folded.iteration_time, full.iteration_time);
  same(folded.breakdown.compute, full.breakdown.compute);
  same(folded.breakdown.exposed_comm, full.breakdown.exposed_comm);
  same(folded.breakdown.overlapped_comm, full.breakdown.overlapped_comm);
  same(folded.breakdown.idle, full.breakdown.idle);
  for (std::size_t g = 0; g < 3; ++g) {
    same(folded.exposed_comm_by_group[g], full.exposed_comm_by_group[g]);
    same(folded.comm_busy_by_group[g], full.comm_busy_by_group[g]);
  }
}

} // namespace

TEST_CASE("folded and full simulations agree on a symmetric cluster") {
  struct Case {
    std::int64_t t, p, d, m;
    model::OptimizerSharding sharding;
    bool sequence;
    double launch_time = 0; // the host's, per kernel: its launches hold the device back
  };
  for (const Case& c : {Case{2, 1, 2, 2, model::OptimizerSharding::none, false},
                        Case{2, 2, 2, 4, model::OptimizerSharding::none, false},
                        Case{4, 2, 2, 2, model::OptimizerSharding::optimizer, true},
                        Case{1, 2, 4, 4, model::OptimizerSharding::full, false},
                        Case{2, 2, 2, 4, model::OptimizerSharding::optimizer, false, 40e-6}}) {
    CAPTURE(c.t);
    CAPTURE(c.p);
    CAPTURE(c.d);
    model::TrainingPlan plan;
    plan.micro_batch = 1;
    plan.global_batch = c.m * c.d;
    plan.parallelism.tensor = c.t;
    plan.parallelism.pipeline = c.p;
    plan.parallelism.data = c.d;
    plan.parallelism.sequence = c.sequence;
    plan.optimizer.sharding = c.sharding;
    plan.host.launch_time = units::Seconds(c.launch_time);
    // Tensor-parallel groups fill a node; replicas and stages sit on separate nodes.
    const auto cluster = cluster_of(c.p * c.d, c.t);
    const auto full = simulate(plan, cluster, false);
    const auto folded = simulate(plan, cluster, true);
    CHECK(folded.summary.simulated_devices == c.p);
    CHECK(full.summary.simulated_devices == c.t * c.p * c.d);
    CHECK(folded.tasks < full.tasks);
    check_same(folded.summary, full.summary);
  }
}

TEST_CASE("the task count equals the lowered DAG's size on every kind of plan, folded or not") {
  struct Case {
    const char* name;
    std::int64_t t, p, d, m, v;
    model::OptimizerSharding sharding;
    bool sequence;
    model::Recompute recompute;
    model::PipelineSchedule schedule;
    bool overlap;
  };
  using S = model::OptimizerSharding;
  using R = model::Recompute;
  using P = model::PipelineSchedule;
  const Case cases[] = {
      {"one device", 1, 1, 1, 2, 1, S::none, false, R::none, P::one_f_one_b, true},
      {"tensor", 4, 1, 1, 2, 1, S::none, false, R::none, P::one_f_one_b, true},
      {"tensor + sequence", 4, 1, 1, 2, 1, S::none, true, R::selective, P::one_f_one_b, true},
      {"data, buckets", 1, 1, 4, 2, 1, S::none, false, R::none, P::one_f_one_b, true},
      {"data, no overlap", 2, 1, 2, 2, 1, S::none, false, R::full, P::one_f_one_b, false},
      {"pipeline 1F1B", 2, 4, 1, 8, 1, S::none, false, R::none, P::one_f_one_b, true},
      {"pipeline GPipe", 1, 2, 2, 4, 1, S::none, false, R::full, P::gpipe, true},
      {"interleaved", 2, 2, 2, 4, 2, S::none, false, R::selective, P::interleaved_one_f_one_b, true},
      {"ZeRO-1", 2, 2, 2, 4, 1, S::optimizer, false, R::none, P::one_f_one_b, true},
      {"ZeRO-3", 1, 2, 4, 2, 1, S::full, false, R::none, P::one_f_one_b, true},
      {"everything", 2, 2, 2, 4, 2, S::full, true, R::full, P::interleaved_one_f_one_b, false},
  };
  const auto model = gpt_small();
  const cost::RooflineCostModel cost(testing::a100());
  // Variant 1 adds what the framework model lowers: fp16 (overflow check), host time kernels and
  // Megatron-DeepSpeed's pipeline (one chunk per stage only).
  for (int variant = 0; variant < 2; ++variant)
    for (const Case& c : cases) {
      CAPTURE(c.name);
      CAPTURE(variant);
      auto plan = testing::plan_of(c.t, c.p, c.d, c.m);
      if (variant == 1) {
        plan.dtype = model::Dtype::fp16;
        plan.host.micro_batch_overhead = units::Seconds(1e-6);
        plan.host.iteration_overhead = units::Seconds(1e-3);
        plan.host.launch_time = units::Seconds(5e-6);
        if (c.v == 1) plan.framework = model::Framework::megatron_deepspeed;
      }
      plan.parallelism.virtual_stages = c.v;
      plan.parallelism.sequence = c.sequence;
      plan.optimizer.sharding = c.sharding;
      plan.recompute = c.recompute;
      plan.pipeline_schedule = c.schedule;
      plan.overlap.dp_grad_reduce = c.overlap;
      const auto count = lowering::count_tasks(model, plan, cost);
      CHECK(count.full == lowering::lower_iteration(model, plan, cost, {false}).size());
      CHECK(count.folded == lowering::lower_iteration(model, plan, cost, {true}).size());
      CHECK(lowering::estimate_task_count(model, plan, {true}) == count.folded);
    }
}
