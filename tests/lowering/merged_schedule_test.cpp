// Megatron-Core's combined 1F1B (training.overlap.expert_comm) as a schedule: one more warm-up
// forward, then every steady-state forward merged with the backward after it.
#include <doctest/doctest.h>

#include <set>
#include <utility>

#include <twocs/lowering/schedule.hpp>

#include "support/scenarios.hpp"

using namespace twocs;
using namespace twocs::lowering;

TEST_CASE("merged steps: without pipelining, the first forward alone, then each forward with the backward before it") {
  auto plan = testing::plan_of(1, 1, 1, 4);
  plan.overlap.expert_comm = true;
  const auto items = pipeline_schedule(plan, 0);
  // combined_1f1b_schedule_for_no_pipelining: F0, F1 + B0, F2 + B1, F3 + B2, B3.
  REQUIRE(items.size() == 8);
  const std::pair<WorkKind, std::int64_t> expected[] = {
      {WorkKind::forward, 0},  {WorkKind::forward, 1}, {WorkKind::backward, 0}, {WorkKind::forward, 2},
      {WorkKind::backward, 1}, {WorkKind::forward, 3}, {WorkKind::backward, 2}, {WorkKind::backward, 3}};
  for (std::size_t i = 0; i < items.size(); ++i) {
    CHECK(items[i].kind == expected[i].first);
    CHECK(items[i].micro_batch == expected[i].second);
    CHECK(items[i].merged_with_next == (i == 1 || i == 3 || i == 5));
  }
  plan.overlap.expert_comm = false;
  for (const auto& item : pipeline_schedule(plan, 0)) CHECK_FALSE(item.merged_with_next);
}

TEST_CASE("merged steps: the interleaved schedule warms up one more forward and merges every steady pair") {
  auto plan = testing::plan_of(1, 2, 1, 8);
  plan.parallelism.virtual_stages = 2;
  plan.pipeline_schedule = model::PipelineSchedule::interleaved_one_f_one_b;
  const auto plain = pipeline_schedule(plan, 0);
  plan.overlap.expert_comm = true;
  const auto merged = pipeline_schedule(plan, 0);
  REQUIRE(merged.size() == plain.size());
  const auto warmup = [](const std::vector<WorkItem>& items) {
    std::size_t n = 0;
    while (n < items.size() && items[n].kind == WorkKind::forward) ++n;
    return n;
  };
  // Stage 0 of 2 with 2 chunks: 2 (p - 1) + (v - 1) p = 4 warm-up forwards, one more merged;
  // the first steady forward follows them before the first backward.
  CHECK(warmup(plain) == 4 + 1);
  CHECK(warmup(merged) == 5 + 1);
  std::set<std::pair<std::int64_t, std::int64_t>> forwards, backwards;
  for (std::size_t i = 0; i < merged.size(); ++i) {
    const auto& item = merged[i];
    const auto key = std::pair{item.micro_batch, item.chunk};
    if (item.kind == WorkKind::forward) {
      CHECK(forwards.insert(key).second);
    } else {
      CHECK(backwards.insert(key).second);
      CHECK(forwards.count(key) == 1); // its forward ran before, never in the same merged step
      const bool merged_with_own_forward = i > 0 && merged[i - 1].merged_with_next &&
                                           merged[i - 1].micro_batch == item.micro_batch &&
                                           merged[i - 1].chunk == item.chunk;
      CHECK_FALSE(merged_with_own_forward);
    }
    if (item.merged_with_next) {
      REQUIRE(i + 1 < merged.size());
      CHECK(item.kind == WorkKind::forward);
      CHECK(merged[i + 1].kind == WorkKind::backward);
      CHECK_FALSE(item.exchange_after); // the pair exchanges once, after its backward
    }
  }
  CHECK(forwards.size() == 16);
  CHECK(backwards.size() == 16);
}
