// Lowers one training iteration (model + plan) to the task DAG: every device's forward and
// backward passes per its pipeline schedule, tensor-parallel collectives inside each layer,
// activations and gradients between pipeline stages, data-parallel gradient reduction
// (bucketed and overlapped with backward, or after it) and the optimizer step.
#pragma once

#include <vector>

#include <twocs/cost/operator_cost_model.hpp>
#include <twocs/lowering/collective_policy.hpp>
#include <twocs/lowering/task_graph.hpp>
#include <twocs/model/training_plan.hpp>
#include <twocs/model/transformer.hpp>

namespace twocs::lowering {

struct LoweringOptions {
  /// Simulate one device per pipeline stage (tensor rank 0 of data-parallel replica 0) instead
  /// of all of them. Tensor-parallel peers and data-parallel replicas run the same program, so
  /// on a symmetric network their timelines are identical: their collectives are lowered from
  /// the simulated member's side only (CollectiveInstance's `only_member`), which keeps its
  /// links loaded as in the full run. Traffic that other replicas would add to shared links
  /// (an oversubscribed fat tree's upper levels) is simulated only with
  /// collectives.folded_peer_traffic (src/lowering/peer_traffic.hpp).
  bool fold_replicas = false;
  /// The algorithm of each collective, per communication kind (collective_policy.hpp); without a
  /// network every collective is the flat ring.
  CollectivePolicy collectives;
  /// The tasks the lowering will emit, when counted before (count_tasks): the graph reserves
  /// room for them at once (TaskGraph::reserve). 0: not known.
  std::uint64_t expected_tasks = 0;
  /// Transformer Engine's FP8 copies of the weights are cached before the iteration, as for a layer
  /// timed after its warm-up (Megatron-Core's TE modules set is_first_microbatch False after their
  /// first call, and only a schedule sets it back): no layer quantizes its weights
  /// (model::first_micro_batch_forward).
  bool fp8_weights_cached = false;
};

/// `model` and `plan` must have passed model::validate. Costs kernels with `cost`.
[[nodiscard]] TaskGraph lower_iteration(const model::TransformerConfig& model, const model::TrainingPlan& plan,
                                        const cost::OperatorCostModel& cost, const LoweringOptions& options = {});

/// The devices that run a program under `options`, in increasing order.
[[nodiscard]] std::vector<DeviceId> simulated_devices(const model::TrainingPlan& plan, const LoweringOptions& options);

} // namespace twocs::lowering
