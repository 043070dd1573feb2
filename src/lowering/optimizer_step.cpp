#include "optimizer_step.hpp"

#include <twocs/model/layer_ops.hpp>
#include <twocs/units/numeric.hpp>

#include "embedding_sync.hpp"
#include "step_emitter.hpp"

namespace twocs::lowering::detail {

std::int64_t OptimizerStep::gradient_parameters_of_stage(const DeviceLowering& device) const {
  const auto& ops = context_.ops;
  std::int64_t total = 0;
  for (std::int64_t slot = 0; slot < context_.plan.parallelism.virtual_stages; ++slot) {
    const auto& chunk = context_.chunk_at(device.at, slot);
    total += chunk.layers * gradient_parameters(ops.layer_backward);
    if (chunk.has_embedding) total += gradient_parameters(ops.embedding_backward);
    if (chunk.has_output_head) total += gradient_parameters(context_.head_backward(chunk));
  }
  return total;
}

void OptimizerStep::finish_iteration(DeviceLowering& device) const {
  const auto& plan = context_.plan;
  const std::int64_t parameters = gradient_parameters_of_stage(device);
  if (!device.gradients.overlapped()) device.gradients.reduce_all(device.program, parameters);
  device.program.wait_for_stream(Stream::data_comm);
  synchronise_embedding(context_, device);
  const bool sharded = plan.optimizer.sharding != model::OptimizerSharding::none;
  const std::int64_t updated = sharded ? units::ceil_div(parameters, plan.parallelism.data) : parameters;
  const auto steps =
      prepare(context_.sink, model::optimizer_steps(updated, plan.optimizer.kind, plan.dtype), context_.cost);
  emit_steps(device, context_.layout, steps, -1, -1);
  weights_.gather_updated(device, parameters);
}

} // namespace twocs::lowering::detail
