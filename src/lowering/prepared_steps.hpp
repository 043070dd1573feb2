// Private: operator sequences with their cost and label resolved once, reused for every
// layer and micro-batch that runs them.
#pragma once

#include <cstdint>
#include <vector>

#include <twocs/cost/operator_cost_model.hpp>
#include <twocs/lowering/task_graph.hpp>
#include <twocs/model/operator.hpp>

namespace twocs::lowering::detail {

struct PreparedStep {
  model::Step step;
  units::Seconds duration; // compute steps only
  std::uint32_t label = 0;
};

using PreparedSequence = std::vector<PreparedStep>;

[[nodiscard]] PreparedSequence prepare(TaskGraph& graph, const model::StepSequence& steps,
                                       const cost::OperatorCostModel& cost);

} // namespace twocs::lowering::detail
