// Private: operator sequences with their cost and label resolved once, reused for every
// layer and micro-batch that runs them.
#pragma once

#include <cstdint>
#include <vector>

#include <twocs/cost/operator_cost_model.hpp>
#include <twocs/lowering/task_sink.hpp>
#include <twocs/model/layer_ops.hpp>
#include <twocs/model/operator.hpp>

namespace twocs::lowering::detail {

struct PreparedStep {
  model::Step step;
  units::Seconds duration; // compute steps only
  std::uint32_t label = 0;
};

using PreparedSequence = std::vector<PreparedStep>;

[[nodiscard]] PreparedSequence prepare(TaskSink& sink, const model::StepSequence& steps,
                                       const cost::OperatorCostModel& cost);

/// The kernels in `steps` (collectives excluded).
[[nodiscard]] int compute_ops(const PreparedSequence& steps);
/// Parameters whose gradients `steps` finalise.
[[nodiscard]] std::int64_t gradient_parameters(const PreparedSequence& steps);
/// Of those, the routed experts' (ComputeOp::expert_grads).
[[nodiscard]] std::int64_t expert_gradient_parameters(const PreparedSequence& steps);

/// The operator sequences every device runs, costed and labelled once.
struct PreparedModel {
  PreparedSequence layer_forward, layer_backward, layer_recompute;
  PreparedSequence embedding_forward, embedding_backward;
  PreparedSequence head_forward, head_backward_tied, head_backward_own;
};

[[nodiscard]] PreparedModel prepare_model(TaskSink& sink, const model::LayerShape& shape, model::Recompute recompute,
                                          const cost::OperatorCostModel& cost);

} // namespace twocs::lowering::detail
