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
  double clock_share = 0;  // compute steps only: cost::OperatorCostModel::clock_share
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
/// A weight-gradient GEMM: the W pass of a zero-bubble schedule, what --delay-wgrad-compute delays.
[[nodiscard]] bool is_weight_grad(const PreparedStep& p);

/// One kind of transformer layer: its forward, backward and what recomputation re-runs, and the
/// forward of its first micro-batch in the step where that differs (Transformer Engine quantizes
/// the weights to FP8 then: model::first_micro_batch_forward; empty otherwise).
struct PreparedLayer {
  PreparedSequence forward, backward, recompute, first_forward;

  [[nodiscard]] const PreparedSequence& forward_of(bool first_micro_batch) const {
    return first_micro_batch && !first_forward.empty() ? first_forward : forward;
  }
};

/// The operator sequences every device runs, costed and labelled once.
struct PreparedModel {
  /// The kinds of layer the model has (FFN dense or MoE, attention windowed or whole), and the
  /// kind of each layer, the multi-token-prediction depths after the model's (model.layers + k).
  std::vector<PreparedLayer> kinds;
  std::vector<std::size_t> kind_of_layer;
  PreparedSequence embedding_forward, embedding_backward;
  PreparedSequence head_forward, head_backward_tied, head_backward_own;
  /// A multi-token-prediction depth's steps around its layer (empty without model.mtp_layers);
  /// `own`: the last stage's copy of an untied embedding reports its gradient.
  PreparedSequence mtp_input_forward, mtp_input_backward_shared, mtp_input_backward_own;
  PreparedSequence mtp_head_forward, mtp_head_backward;

  /// The sequences of layer `index` (0-based over the model).
  [[nodiscard]] const PreparedLayer& layer_at(std::int64_t index) const { return kinds[kind_at(index)]; }
  [[nodiscard]] std::size_t kind_at(std::int64_t index) const { return kind_of_layer[static_cast<std::size_t>(index)]; }
};

/// The sequences of `shape`'s layers and blocks, recomputing as `plan` says.
[[nodiscard]] PreparedModel prepare_model(TaskSink& sink, const model::LayerShape& shape,
                                          const model::TrainingPlan& plan, const cost::OperatorCostModel& cost);

} // namespace twocs::lowering::detail
