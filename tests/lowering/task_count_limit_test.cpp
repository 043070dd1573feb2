// count_tasks's limits and least_folded_tasks's closed-form bound: a plan too large for any run
// is refused without walking all of it (2^30 micro-batches once ran out of memory in the walk).
#include <doctest/doctest.h>

#include <cstdint>

#include <twocs/cost/roofline.hpp>
#include <twocs/lowering/task_count.hpp>
#include <twocs/model/size_limits.hpp>

#include "support/scenarios.hpp"

using namespace twocs;

TEST_CASE("task count: the closed-form bound lies below the folded count") {
  const auto model = testing::gpt(4, 512, 8);
  const cost::RooflineCostModel cost(testing::a100());
  for (const std::int64_t micro_batches : {1, 4, 16}) {
    CAPTURE(micro_batches);
    const auto plan = testing::plan_of(2, 2, 2, micro_batches);
    const auto count = lowering::count_tasks(model, plan, cost);
    CHECK(count.complete);
    CHECK(lowering::least_folded_tasks(model, plan) == doctest::Approx(2.0 * 4 * static_cast<double>(micro_batches)));
    CHECK(lowering::least_folded_tasks(model, plan) <= static_cast<double>(count.folded));
  }
}

TEST_CASE("task count: at the largest global batch the bound is exact in floating point, not wrapped") {
  const auto model = testing::gpt(model::limits::layers, 512, 8);
  const auto plan = testing::plan_of(1, 1, 1, model::limits::global_batch);
  // 2 x 2^30 micro-batches x 2^16 layers = 2^47: beyond any task limit, and exact.
  CHECK(lowering::least_folded_tasks(model, plan) == 140737488355328.0);
}

TEST_CASE("task count: a limit stops the count just past it, and says the counts are lower bounds") {
  const auto model = testing::gpt(4, 512, 8);
  const cost::RooflineCostModel cost(testing::a100());
  const auto plan = testing::plan_of(2, 2, 2, 8);
  const auto whole = lowering::count_tasks(model, plan, cost);
  REQUIRE(whole.folded > 100);
  const auto folded_stop = lowering::count_tasks(model, plan, cost, {}, {100, UINT64_MAX});
  CHECK_FALSE(folded_stop.complete);
  CHECK(folded_stop.folded == 101);
  const auto full_stop = lowering::count_tasks(model, plan, cost, {}, {UINT64_MAX, 100});
  CHECK_FALSE(full_stop.complete);
  CHECK(full_stop.full > 100);
  CHECK(full_stop.full <= whole.full);
  // A limit the plan stays within changes nothing.
  const auto within = lowering::count_tasks(model, plan, cost, {}, {whole.folded, whole.full});
  CHECK(within.complete);
  CHECK(within.folded == whole.folded);
  CHECK(within.full == whole.full);
}
