#include "step_synchronisation.hpp"

#include <numeric>

#include <twocs/model/parameters.hpp>

namespace twocs::lowering::detail {

void model_parallel_scalar_all_reduce(const IterationContext& context, DeviceLowering& device, std::uint32_t label) {
  CollectiveSpec spec;
  spec.kind = model::Collective::all_reduce;
  spec.pass = model::Pass::optimizer;
  spec.size = units::Bytes(4); // one fp32 scalar
  spec.label = label;
  for (model::CommGroup group : {model::CommGroup::tensor, model::CommGroup::pipeline}) {
    spec.group = group;
    device.program.collective(spec, context.layout.group(device.device(), group), CollectiveWait{0, false});
  }
  if (context.plan.host.synchronize) device.program.synchronize_host();
}

void reduce_sequence_parallel_gradients(const IterationContext& context, DeviceLowering& device) {
  const auto& plan = context.plan;
  if (!plan.parallelism.sequence || plan.parallelism.tensor == 1) return;
  // Every layer's weights replicated over the tensor group (norms, row-parallel biases, a MoE
  // layer's router, MLA's down projections; parameters.hpp), the final norm on the last chunk and
  // the multi-token-prediction depths' layers and norms.
  const auto counts = model::count_parameters(context.model, plan.parallelism.tensor, plan.parallelism.expert);
  double elements = 0;
  for (std::int64_t slot = 0; slot < plan.chunks_per_rank(); ++slot) {
    const auto& chunk = context.chunk_at(device.at, slot);
    elements += static_cast<double>(counts.replicated_range(chunk.first_layer, chunk.layers)) +
                (chunk.has_output_head ? static_cast<double>(counts.final_norm) : 0.0) +
                static_cast<double>(counts.mtp_replicated_range(context.model.layers, chunk.mtp_layers));
  }
  CollectiveSpec spec;
  spec.kind = model::Collective::all_reduce;
  spec.group = model::CommGroup::tensor;
  spec.pass = model::Pass::backward;
  spec.size = units::Bytes(elements * device.gradients.element_size());
  spec.label = context.labels.layernorm_grads;
  device.program.collective(spec, context.layout.group(device.device(), model::CommGroup::tensor),
                            CollectiveWait{0, false});
}

void reduce_fp8_amax(const IterationContext& context, DeviceLowering& device, const model::ModelChunk& chunk,
                     model::Pass pass, std::int64_t micro_batch) {
  const auto& plan = context.plan;
  if (plan.dtype != model::Dtype::fp8 || plan.fp8_recipe != model::TrainingPlan::Fp8Recipe::delayed ||
      plan.framework != model::Framework::megatron_lm || chunk.layers == 0)
    return;
  constexpr double forward_bytes_per_layer = 84, backward_bytes_per_layer = 56; // 7 GEMMs x 3 and x 2 fp32
  const DeviceId first = context.layout.rank({0, 0, device.at.pipeline, 0});
  std::vector<DeviceId> stage(static_cast<std::size_t>(context.layout.ranks_per_stage()));
  std::iota(stage.begin(), stage.end(), first);
  CollectiveSpec spec;
  spec.kind = model::Collective::all_reduce;
  spec.group = model::CommGroup::tensor;
  spec.pass = pass;
  spec.size = units::Bytes(static_cast<double>(chunk.layers) *
                           (pass == model::Pass::forward ? forward_bytes_per_layer : backward_bytes_per_layer));
  spec.label = context.labels.fp8_amax;
  spec.micro_batch = static_cast<std::int32_t>(micro_batch);
  device.program.collective(spec, stage, CollectiveWait{0, false});
}

void host_time(DeviceLowering& device, units::Seconds duration, std::uint32_t label, std::int64_t micro_batch) {
  if (duration.value() <= 0) return;
  const model::Pass pass = micro_batch < 0 ? model::Pass::optimizer : model::Pass::forward;
  device.program.compute({pass, -1, static_cast<std::int32_t>(micro_batch), label},
                         {duration, units::Flops(0), units::Bytes(0), false, 0.0F}); // host time: no clock
}

} // namespace twocs::lowering::detail
