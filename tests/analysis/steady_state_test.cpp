// Replaying the steady state (analysis/steady_state.hpp): the shortened iteration's size, and
// the replayed summary against the simulation of every micro-batch.
#include <doctest/doctest.h>

#include <string>

#include <twocs/analysis/breakdown.hpp>
#include <twocs/analysis/steady_state.hpp>
#include <twocs/analysis/summarize.hpp>
#include <twocs/cost/roofline.hpp>
#include <twocs/engine/simulate.hpp>
#include <twocs/lowering/lower_iteration.hpp>
#include <twocs/platform/topology.hpp>

#include "support/scenarios.hpp"

using namespace twocs;

namespace {

using testing::cluster_of;
using testing::plan_of;

model::TrainingPlan interleaved(std::int64_t p, std::int64_t v, std::int64_t d, std::int64_t m) {
  auto plan = plan_of(1, p, d, m);
  plan.parallelism.virtual_stages = v;
  plan.pipeline_schedule = model::PipelineSchedule::interleaved_one_f_one_b;
  return plan;
}

struct Simulated {
  lowering::TaskGraph graph{0};
  engine::Timeline timeline;
  analysis::Summary summary;
};

Simulated simulate(const model::TransformerConfig& model, const model::TrainingPlan& plan,
                   const model::TrainingPlan& summarized, const hardware::ClusterSpec& cluster) {
  const cost::RooflineCostModel cost(cluster.device);
  Simulated s;
  s.graph = lowering::lower_iteration(model, plan, cost, {false});
  s.timeline = engine::simulate(s.graph, platform::build_topology(cluster, plan.world_size()));
  s.summary = analysis::summarize(s.graph, s.timeline, model, summarized, cluster);
  return s;
}

/// The summary of `plan` with its steady state replayed, checked to have replayed.
analysis::Summary replayed(const model::TransformerConfig& model, const model::TrainingPlan& plan,
                           const hardware::ClusterSpec& cluster) {
  const auto replay = analysis::choose_replay(plan);
  REQUIRE(replay);
  Simulated s = simulate(model, analysis::shortened(plan, *replay), plan, cluster);
  std::string why_not;
  const auto steady = analysis::find_steady_state(s.graph, s.timeline, *replay, s.summary.measured_device, why_not);
  INFO(why_not);
  REQUIRE(steady);
  analysis::add_left_out_periods(s.summary, s.graph, s.timeline, *replay, *steady);
  return s.summary;
}

void check_same(const analysis::Summary& replay, const analysis::Summary& full) {
  const double t = full.iteration_time.value();
  const auto same = [t](units::Seconds a, units::Seconds b) { CHECK(std::fabs(a.value() - b.value()) <= 1e-9 * t); };
  same(replay.iteration_time, full.iteration_time);
  same(replay.breakdown.compute, full.breakdown.compute);
  same(replay.breakdown.exposed_comm, full.breakdown.exposed_comm);
  same(replay.breakdown.overlapped_comm, full.breakdown.overlapped_comm);
  same(replay.breakdown.idle, full.breakdown.idle);
  same(replay.comm_busy, full.comm_busy);
  same(replay.host_wait, full.host_wait);
  for (std::size_t g = 0; g < model::comm_group_count; ++g) {
    same(replay.exposed_comm_by_group[g], full.exposed_comm_by_group[g]);
    same(replay.comm_busy_by_group[g], full.comm_busy_by_group[g]);
    same(replay.overlapped_comm_by_group[g], full.overlapped_comm_by_group[g]);
  }
  CHECK(replay.mfu == doctest::Approx(full.mfu).epsilon(1e-9));
}

} // namespace

TEST_CASE("the shortened iteration keeps warm-up, three lags and three periods, and leaves out whole periods") {
  // 1F1B over p stages lags by p micro-batches and repeats every one: 3 p + 3 of them run.
  const auto one_f_one_b = analysis::choose_replay(plan_of(1, 4, 2, 64));
  REQUIRE(one_f_one_b);
  CHECK(one_f_one_b->period == 1);
  CHECK(one_f_one_b->simulated == 3 * 4 + 3);
  CHECK(one_f_one_b->periods_left_out() == 64 - 15);
  // Interleaved over p stages lags by 2 p and repeats every p (its chunks cycle over groups of
  // p): 6 p + 3 p, rounded up to leave out whole periods.
  const auto chunks = analysis::choose_replay(interleaved(4, 2, 1, 64));
  REQUIRE(chunks);
  CHECK(chunks->period == 4);
  CHECK(chunks->simulated == 36);
  CHECK(chunks->periods_left_out() == 7);
  const auto odd = analysis::choose_replay(interleaved(3, 2, 1, 48));
  REQUIRE(odd);
  CHECK(odd->simulated == 27); // 18 + 9, and 48 - 27 = 21 is whole periods of 3
  CHECK(analysis::shortened(plan_of(1, 4, 2, 64), *one_f_one_b).global_batch == 15 * 2);
  // Too short to leave out two periods; schedules without a replayable steady state.
  CHECK_FALSE(analysis::choose_replay(plan_of(1, 4, 2, 16)));
  auto gpipe = plan_of(1, 4, 1, 64);
  gpipe.pipeline_schedule = model::PipelineSchedule::gpipe;
  CHECK_FALSE(analysis::choose_replay(gpipe));
}

TEST_CASE("a replayed steady state reports what simulating every micro-batch reports") {
  const auto model = testing::gpt(8, 1024, 16, 1024);
  SUBCASE("1F1B with speed variation, its stages at their own speeds") {
    auto plan = plan_of(2, 4, 1, 24);
    auto cluster = cluster_of(4, 2);
    cluster.device.speed_variation = {0.05, 3};
    check_same(replayed(model, plan, cluster), simulate(model, plan, plan, cluster).summary);
  }
  SUBCASE("interleaved 1F1B with the gradients' all-reduce overlapped") {
    auto plan = interleaved(2, 2, 2, 32);
    plan.overlap.dp_grad_reduce = true;
    const auto cluster = cluster_of(4, 1);
    check_same(replayed(model, plan, cluster), simulate(model, plan, plan, cluster).summary);
  }
  SUBCASE("gradient accumulation without pipeline stages, the host launching each kernel") {
    auto plan = plan_of(2, 1, 2, 12);
    plan.host.launch_time = units::Seconds(20e-6);
    const auto cluster = cluster_of(2, 2);
    check_same(replayed(model, plan, cluster), simulate(model, plan, plan, cluster).summary);
  }
}

TEST_CASE("replicas that meet only at the iteration's end, each at its own speed, are not replayed") {
  const auto model = testing::gpt(8, 1024, 16, 1024);
  const auto plan = plan_of(2, 4, 2, 24);
  auto cluster = cluster_of(8, 2);
  cluster.device.speed_variation = {0.05, 3};
  const auto replay = analysis::choose_replay(plan);
  REQUIRE(replay);
  Simulated s = simulate(model, analysis::shortened(plan, *replay), plan, cluster);
  std::string why_not;
  CHECK_FALSE(analysis::find_steady_state(s.graph, s.timeline, *replay, s.summary.measured_device, why_not));
  CHECK(why_not.find("at their own paces") != std::string::npos);
}

TEST_CASE("a timeline that does not repeat is not replayed") {
  const auto model = testing::gpt(4, 1024, 16, 1024);
  const auto plan = plan_of(1, 2, 1, 16);
  const auto cluster = cluster_of(2, 1);
  const auto replay = analysis::choose_replay(plan);
  REQUIRE(replay);
  Simulated s = simulate(model, analysis::shortened(plan, *replay), plan, cluster);
  std::string why_not;
  REQUIRE(analysis::find_steady_state(s.graph, s.timeline, *replay, s.summary.measured_device, why_not));
  // One checked kernel a millisecond late: its twin no longer follows it by the period.
  for (lowering::TaskId id = 0; id < s.graph.size(); ++id)
    if (s.graph.task(id).micro_batch == replay->first_checked && s.graph.task(id).is_kernel()) {
      s.timeline.tasks[id].start += units::Seconds(1e-3);
      break;
    }
  CHECK_FALSE(analysis::find_steady_state(s.graph, s.timeline, *replay, s.summary.measured_device, why_not));
  CHECK(why_not.find("does not repeat") != std::string::npos);
}
