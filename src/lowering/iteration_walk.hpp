// Private: the iteration lowering into any task sink (a TaskGraph, or a TaskCounter that only
// counts), for the devices given.
#pragma once

#include <vector>

#include <twocs/cost/operator_cost_model.hpp>
#include <twocs/lowering/collective_policy.hpp>
#include <twocs/lowering/task_sink.hpp>
#include <twocs/model/training_plan.hpp>
#include <twocs/model/transformer.hpp>

namespace twocs::lowering::detail {

void lower_devices(TaskSink& sink, const model::TransformerConfig& model, const model::TrainingPlan& plan,
                   const cost::OperatorCostModel& cost, const std::vector<DeviceId>& devices,
                   const CollectivePolicy& collectives = {}, bool fp8_weights_cached = false);

} // namespace twocs::lowering::detail
