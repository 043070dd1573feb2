#include "optimizer_step.hpp"

#include <variant>

#include <twocs/model/layer_ops.hpp>
#include <twocs/units/numeric.hpp>

#include "embedding_sync.hpp"
#include "mirror_sync.hpp"
#include "step_emitter.hpp"
#include "step_synchronisation.hpp"

namespace twocs::lowering::detail {

std::int64_t OptimizerStep::gradient_parameters_of_stage(const DeviceLowering& device) const {
  std::int64_t total = 0;
  for (std::int64_t slot = 0; slot < context_.plan.chunks_per_rank(); ++slot)
    total += context_.gradient_parameters_of(context_.chunk_at(device.at, slot));
  return total;
}

std::int64_t OptimizerStep::expert_gradient_parameters_of_stage(const DeviceLowering& device) const {
  std::int64_t total = 0;
  for (std::int64_t slot = 0; slot < context_.plan.chunks_per_rank(); ++slot)
    total += context_.expert_gradient_parameters_of(context_.chunk_at(device.at, slot));
  return total;
}

void OptimizerStep::finish_iteration(DeviceLowering& device) const {
  const auto& plan = context_.plan;
  const std::int64_t parameters = gradient_parameters_of_stage(device);
  const std::int64_t experts = expert_gradient_parameters_of_stage(device);
  if (!device.gradients.overlapped()) device.gradients.reduce_all(device.program, parameters, experts);
  device.program.wait_for_stream(Stream::data_comm);
  // Megatron-LM's finalize of the gradients: data-parallel, then sequence-parallel LayerNorm,
  // then the tied embedding (megatron/core/distributed/finalize_model_grads.py).
  const bool sharded = plan.optimizer.sharding != model::OptimizerSharding::none;
  // Expert state is sharded over the t d cp / ep ranks holding the same experts (Megatron-Core's
  // expert-data-parallel group with expert-tensor-parallel size 1).
  const std::int64_t replicas = plan.parallelism.data * plan.parallelism.context;
  const std::int64_t expert_replicas = plan.parallelism.tensor * replicas / plan.parallelism.expert;
  const std::int64_t updated =
      sharded ? units::ceil_div(parameters - experts, replicas) + units::ceil_div(experts, expert_replicas)
              : parameters;
  reduce_sequence_parallel_gradients(context_, device);
  // Under dualpipe both ranks of a mirrored pair hold the embedding and the output layer: summing
  // all their gradients covers the tied embedding too.
  if (plan.pipeline_schedule == model::PipelineSchedule::dualpipe)
    synchronise_mirrored_copies(context_, device, updated);
  else
    synchronise_embedding(context_, device);
  // The full-iteration graph ends with the gradients' finalisation (finalize_model_grads runs
  // inside forward_backward_func); the optimizer step is launched eagerly after it.
  device.program.end_graph();
  host_time(device, plan.host.iteration_overhead, context_.labels.host_iteration, -1);
  const auto steps =
      prepare(context_.sink, model::optimizer_steps(updated, plan.optimizer.kind, plan.dtype), context_.cost);
  for (const auto& step : steps) {
    emit_steps(device, context_.layout, PreparedSequence{step}, -1, -1);
    const auto* op = std::get_if<model::ComputeOp>(&step.step);
    if (op == nullptr) continue;
    // The host reads the overflow flag after unscaling and the norm after computing it.
    if (model::reduces_model_parallel_scalar(*op))
      model_parallel_scalar_all_reduce(
          context_, device, op->name == "optimizer.unscale" ? context_.labels.found_inf : context_.labels.grad_norm);
  }
  weights_.gather_updated(device, parameters, experts);
}

} // namespace twocs::lowering::detail
