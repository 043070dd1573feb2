// Private: the end of a device's iteration. Gradients not reduced during backward are reduced
// now, the tied embedding's gradient is synchronised, the optimizer updates this device's
// parameters (its 1/d shard under a sharded optimizer), and sharded weights are gathered again.
#pragma once

#include <cstdint>

#include "iteration_context.hpp"
#include "sharded_weights.hpp"

namespace twocs::lowering::detail {

class OptimizerStep {
public:
  OptimizerStep(const IterationContext& context, const ShardedWeights& weights)
      : context_(context), weights_(weights) {}

  void finish_iteration(DeviceLowering& device) const;

private:
  /// Parameters whose gradients `device` holds: one micro-batch's backward finalises each once.
  [[nodiscard]] std::int64_t gradient_parameters_of_stage(const DeviceLowering& device) const;
  /// Of those, the routed experts'.
  [[nodiscard]] std::int64_t expert_gradient_parameters_of_stage(const DeviceLowering& device) const;

  const IterationContext& context_;
  const ShardedWeights& weights_;
};

} // namespace twocs::lowering::detail
