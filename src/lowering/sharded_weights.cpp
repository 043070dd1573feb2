#include "sharded_weights.hpp"

#include <twocs/model/parameters.hpp>

#include "gradient_sync.hpp"

namespace twocs::lowering::detail {
namespace {

/// Bytes per weight element gathered: the 16-bit model weights (fp8 training keeps them in 16 bits), fp32 in fp32.
double weight_element_size(const model::TrainingPlan& plan) { return plan.dtype == model::Dtype::fp32 ? 4.0 : 2.0; }

} // namespace

ShardedWeights::ShardedWeights(const IterationContext& context)
    : context_(context), counts_(model::count_parameters(context.model, context.plan.parallelism.tensor,
                                                         context.plan.parallelism.expert)) {}

void ShardedWeights::gather(DeviceLowering& device, std::int64_t parameters, std::int64_t expert_parameters,
                            const CollectiveSpec& spec, CollectiveWait wait) const {
  // Dense weights over the data group, which spans the context-parallel ranks too
  // (rank_layout.hpp); the routed experts' over the expert-data-parallel group that holds them.
  const auto over = [&](std::int64_t count, const std::vector<DeviceId>& group) {
    if (count <= 0 || group.size() < 2) return;
    CollectiveSpec sized = spec;
    sized.size = units::Bytes(static_cast<double>(count) * weight_element_size(context_.plan));
    device.program.collective(sized, group, wait);
  };
  over(parameters - expert_parameters, context_.layout.group(device.device(), model::CommGroup::data));
  over(expert_parameters, expert_data_group(context_.layout, device.device(), context_.plan.parallelism.expert));
}

void ShardedWeights::gather_weights_of(DeviceLowering& device, std::int64_t layer, std::int64_t micro_batch,
                                       CollectiveWait wait) const {
  CollectiveSpec spec;
  spec.kind = model::Collective::all_gather;
  spec.group = model::CommGroup::data;
  spec.pass = model::Pass::forward;
  spec.label = context_.labels.layer_gather;
  spec.micro_batch = static_cast<std::int32_t>(micro_batch);
  gather(device, counts_.layer_range(layer, 1), counts_.expert_range(layer, 1), spec, wait);
}

void ShardedWeights::gather_layer(DeviceLowering& device, std::int64_t position, std::int64_t layers, int ops_per_layer,
                                  std::int64_t micro_batch, std::int64_t layer, std::int64_t next) const {
  const auto& plan = context_.plan;
  if (plan.optimizer.sharding != model::OptimizerSharding::full ||
      plan.parallelism.data * plan.parallelism.context == 1)
    return;
  if (position == 0) gather_weights_of(device, layer, micro_batch, {0, false});
  if (position + 1 < layers) gather_weights_of(device, next, micro_batch, {ops_per_layer, false});
}

void ShardedWeights::gather_updated(DeviceLowering& device, std::int64_t parameters,
                                    std::int64_t expert_parameters) const {
  const auto& plan = context_.plan;
  // ZeRO-3 and FSDP keep the updated weights sharded: the next forward gathers each layer before
  // it runs (gather_layer), so nothing is gathered after the step (PyTorch FSDP2 fully_shard:
  // FSDPParamGroup.pre_forward unshards; DeepSpeed ZeRO-3 gathers partitioned parameters in
  // its pre-forward hooks).
  if (plan.optimizer.sharding == model::OptimizerSharding::none ||
      plan.optimizer.sharding == model::OptimizerSharding::full)
    return;
  CollectiveSpec spec;
  spec.kind = model::Collective::all_gather;
  spec.group = model::CommGroup::data;
  spec.pass = model::Pass::optimizer;
  spec.label = context_.labels.parameter_gather;
  gather(device, parameters, expert_parameters, spec, {});
}

} // namespace twocs::lowering::detail
