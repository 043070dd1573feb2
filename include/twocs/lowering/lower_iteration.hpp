// Lowers one training iteration (model + plan) to the task DAG: every device's forward and
// backward passes per its pipeline schedule, tensor-parallel collectives inside each layer,
// activations and gradients between pipeline stages, data-parallel gradient reduction
// (bucketed and overlapped with backward, or after it) and the optimizer step.
#pragma once

#include <twocs/cost/operator_cost_model.hpp>
#include <twocs/lowering/task_graph.hpp>
#include <twocs/model/training_plan.hpp>
#include <twocs/model/transformer.hpp>

namespace twocs::lowering {

/// `model` and `plan` must have passed model::validate. Costs kernels with `cost`.
[[nodiscard]] TaskGraph lower_iteration(const model::TransformerConfig& model, const model::TrainingPlan& plan,
                                        const cost::OperatorCostModel& cost);

} // namespace twocs::lowering
