// The schedules that split a backward into B (input gradient) and W (weight gradient): zb-h1
// (Qi et al., ICLR 2024) and dualpipe (DeepSeek-V3 report, section 3.2.1; deepseek-ai/DualPipe).
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>

#include <twocs/cost/roofline.hpp>
#include <twocs/lowering/lower_iteration.hpp>
#include <twocs/lowering/schedule.hpp>

#include "support/scenarios.hpp"

using namespace twocs;
using namespace twocs::lowering;

namespace {

model::TrainingPlan plan_with(model::PipelineSchedule schedule, std::int64_t p, std::int64_t m) {
  auto plan = testing::plan_of(1, p, 1, m);
  plan.pipeline_schedule = schedule;
  return plan;
}

using Key = std::pair<std::int64_t, std::int64_t>; // micro-batch, chunk slot

/// Each (micro-batch, slot) runs forward once, then backward once, then its deferred W once.
void check_each_pass_once(const std::vector<WorkItem>& items, std::size_t expected) {
  std::set<Key> forward, backward, deferred, weight;
  for (const auto& item : items) {
    const Key key{item.micro_batch, item.chunk};
    if (item.kind == WorkKind::forward) CHECK(forward.insert(key).second);
    if (item.kind == WorkKind::backward) {
      CHECK(forward.count(key) == 1);
      CHECK(backward.insert(key).second);
      if (item.weight_deferred) deferred.insert(key);
    }
    if (item.kind == WorkKind::weight) {
      CHECK(deferred.count(key) == 1);
      CHECK(weight.insert(key).second);
    }
  }
  CHECK(forward.size() == expected);
  CHECK(backward.size() == expected);
  CHECK(weight == deferred);
}

/// The most micro-batches whose forward ran and whose weight gradients did not yet.
std::int64_t peak_in_flight(const std::vector<WorkItem>& items) {
  std::int64_t held = 0, peak = 0;
  for (const auto& item : items) {
    if (item.kind == WorkKind::forward) ++held;
    if ((item.kind == WorkKind::backward && !item.weight_deferred) || item.kind == WorkKind::weight) --held;
    peak = std::max(peak, held);
  }
  return peak;
}

} // namespace

TEST_CASE("zb-h1: stage i keeps 1F1B's order and runs the W of micro-batch k after the B of k + i") {
  const std::int64_t p = 4, m = 8;
  const auto zb = plan_with(model::PipelineSchedule::zb_h1, p, m);
  const auto one_f_one_b = plan_with(model::PipelineSchedule::one_f_one_b, p, m);
  for (std::int64_t stage = 0; stage < p; ++stage) {
    CAPTURE(stage);
    const auto items = pipeline_schedule(zb, stage);
    check_each_pass_once(items, m);
    // Without the W passes the order is 1F1B's.
    std::vector<std::pair<WorkKind, std::int64_t>> without_w, reference;
    for (const auto& item : items)
      if (item.kind != WorkKind::weight) without_w.emplace_back(item.kind, item.micro_batch);
    for (const auto& item : pipeline_schedule(one_f_one_b, stage)) reference.emplace_back(item.kind, item.micro_batch);
    CHECK(without_w == reference);
    for (std::size_t i = 0; i + 1 < items.size(); ++i)
      if (items[i].kind == WorkKind::backward && items[i].micro_batch >= stage && stage > 0) {
        CHECK(items[i + 1].kind == WorkKind::weight);
        CHECK(items[i + 1].micro_batch == items[i].micro_batch - stage);
      }
    // Every stage holds the p micro-batches stage 0 holds in 1F1B (Qi et al. 2024, section 2.1).
    CHECK(peak_in_flight(items) == p);
  }
}

TEST_CASE("zb-h1 on the first stage, and with one stage, is 1F1B item for item") {
  for (auto [p, stage] : {std::pair{4, 0}, std::pair{1, 0}}) {
    const auto zb = pipeline_schedule(plan_with(model::PipelineSchedule::zb_h1, p, 6), stage);
    const auto reference = pipeline_schedule(plan_with(model::PipelineSchedule::one_f_one_b, p, 6), stage);
    REQUIRE(zb.size() == reference.size());
    for (std::size_t i = 0; i < zb.size(); ++i) {
      CHECK(zb[i].kind == reference[i].kind);
      CHECK(zb[i].micro_batch == reference[i].micro_batch);
      CHECK_FALSE(zb[i].weight_deferred);
    }
  }
}

TEST_CASE("dualpipe: every rank runs each micro-batch of its two chunks once, half of them in each direction") {
  for (auto [p, m] : {std::pair{2, 4}, std::pair{4, 8}, std::pair{4, 12}, std::pair{8, 20}}) {
    CAPTURE(p);
    CAPTURE(m);
    const auto plan = plan_with(model::PipelineSchedule::dualpipe, p, m);
    for (std::int64_t rank = 0; rank < p; ++rank) {
      CAPTURE(rank);
      const auto items = pipeline_schedule(plan, rank);
      check_each_pass_once(items, static_cast<std::size_t>(m));
      for (const auto& item : items) CHECK(item.chunk == (item.micro_batch < m / 2 ? 0 : 1));
      // DualPipe's README: activations of p + 1 micro-batches per device (docs/memory-model.md).
      CHECK(peak_in_flight(items) == p + 1);
      // Overlapped pairs are a forward of one direction and a backward of the other.
      for (std::size_t i = 0; i + 1 < items.size(); ++i)
        if (items[i].merged_with_next) {
          CHECK(items[i + 1].kind == WorkKind::backward);
          CHECK(items[i].chunk != items[i + 1].chunk);
        }
    }
  }
}

TEST_CASE("zb-h1 and dualpipe lower to an acyclic DAG whose collectives all match") {
  for (auto schedule : {model::PipelineSchedule::zb_h1, model::PipelineSchedule::dualpipe}) {
    CAPTURE(model::to_string(schedule));
    auto plan = testing::plan_of(2, 4, 2, 8);
    plan.pipeline_schedule = schedule;
    const cost::RooflineCostModel cost(testing::a100());
    const TaskGraph g = lower_iteration(testing::gpt(8, 256, 8, 128, 1024), plan, cost);
    CHECK(g.is_acyclic());
  }
}
