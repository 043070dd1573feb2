#include "prepared_steps.hpp"

#include <variant>

namespace twocs::lowering::detail {

PreparedSequence prepare(TaskGraph& graph, const model::StepSequence& steps, const cost::OperatorCostModel& cost) {
  PreparedSequence prepared;
  prepared.reserve(steps.size());
  for (const auto& step : steps) {
    PreparedStep p{step, units::Seconds(0), 0};
    if (const auto* op = std::get_if<model::ComputeOp>(&step)) {
      p.duration = cost.duration(*op);
      p.label = graph.intern_label(op->name);
    } else {
      p.label = graph.intern_label(std::get<model::CollectiveOp>(step).name);
    }
    prepared.push_back(std::move(p));
  }
  return prepared;
}

} // namespace twocs::lowering::detail
