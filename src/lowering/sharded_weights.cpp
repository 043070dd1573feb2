#include "sharded_weights.hpp"

#include <twocs/model/fp8_weights.hpp>
#include <twocs/model/parameters.hpp>

#include "gradient_sync.hpp"
#include "prepared_steps.hpp"

namespace twocs::lowering::detail {

ShardedWeights::ShardedWeights(const IterationContext& context)
    : context_(context), counts_(model::count_parameters(context.model, context.plan.parallelism.tensor,
                                                         context.plan.parallelism.expert)) {}

ShardedWeights::Weights ShardedWeights::weights_of_layers(std::int64_t first, std::int64_t count) const {
  return {counts_.layer_range(first, count), counts_.expert_range(first, count), counts_.linear_range(first, count)};
}

std::int64_t ShardedWeights::linear_parameters_of(const DeviceLowering& device) const {
  std::int64_t total = 0;
  for (std::int64_t slot = 0; slot < context_.plan.chunks_per_rank(); ++slot) {
    const auto& chunk = context_.chunk_at(device.at, slot);
    total += counts_.linear_range(chunk.first_layer, chunk.layers) +
             counts_.linear_range(context_.model.layers, chunk.mtp_layers);
  }
  return total;
}

void ShardedWeights::gather(DeviceLowering& device, const Weights& weights, const CollectiveSpec& spec,
                            CollectiveWait wait) const {
  // Dense weights over the data group, which spans the context-parallel ranks too
  // (rank_layout.hpp); the routed experts' over the expert-data-parallel group that holds them.
  const auto over = [&](std::int64_t count, std::int64_t linear, const std::vector<DeviceId>& group) {
    if (count <= 0 || group.size() < 2) return;
    CollectiveSpec sized = spec;
    sized.size = units::Bytes(model::gathered_weight_bytes(context_.plan, count, linear));
    device.program.collective(sized, group, wait);
  };
  over(weights.parameters - weights.experts, weights.linear - weights.experts,
       context_.layout.group(device.device(), model::CommGroup::data));
  over(weights.experts, weights.experts,
       expert_data_group(context_.layout, device.device(), context_.plan.parallelism.expert));
}

CollectiveSpec ShardedWeights::forward_gather_spec(std::int64_t micro_batch) const {
  CollectiveSpec spec;
  spec.kind = model::Collective::all_gather;
  spec.group = model::CommGroup::data;
  spec.pass = model::Pass::forward;
  spec.label = context_.labels.layer_gather;
  spec.micro_batch = static_cast<std::int32_t>(micro_batch);
  return spec;
}

void ShardedWeights::gather_weights_of(DeviceLowering& device, std::int64_t layer, std::int64_t micro_batch,
                                       CollectiveWait wait) const {
  gather(device, weights_of_layers(layer, 1), forward_gather_spec(micro_batch), wait);
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

bool ShardedWeights::overlapped_gather() const {
  const auto& plan = context_.plan;
  return plan.overlap.param_gather && plan.parallelism.data * plan.parallelism.context > 1 &&
         (plan.optimizer.sharding == model::OptimizerSharding::optimizer ||
          plan.optimizer.sharding == model::OptimizerSharding::gradients);
}

void ShardedWeights::gather_before_first_forward(DeviceLowering& device, std::int64_t slot,
                                                 std::int64_t micro_batch) const {
  if (!overlapped_gather() || micro_batch != 0) return;
  if (slot == 0) gather_chunk(device, context_.chunk_at(device.at, 0), true);
  if (slot + 1 < context_.plan.chunks_per_rank()) gather_chunk(device, context_.chunk_at(device.at, slot + 1), false);
}

void ShardedWeights::gather_chunk(DeviceLowering& device, const model::ModelChunk& chunk, bool waited) const {
  const CollectiveSpec spec = forward_gather_spec(0);
  // What the step would gather for this chunk (the optimizer's count, tied-embedding copies included).
  std::int64_t rest = context_.gradient_parameters_of(chunk);
  std::int64_t rest_experts = context_.expert_gradient_parameters_of(chunk);
  // Kernels of the chunk's first forward before the weights are used: the embedding's, then each layer's.
  int before = 0;
  const auto wait = [&] { return waited ? CollectiveWait{before, false} : CollectiveWait{0, true}; };
  if (chunk.has_embedding) {
    gather(device, {counts_.embedding, 0, 0}, spec, wait());
    rest -= counts_.embedding;
    before += compute_ops(context_.ops.embedding_forward);
  }
  for (std::int64_t l = chunk.first_layer; l < chunk.first_layer + chunk.layers; ++l) {
    const Weights layer = weights_of_layers(l, 1);
    gather(device, layer, spec, wait());
    rest -= layer.parameters;
    rest_experts -= layer.experts;
    before += compute_ops(context_.ops.layer_at(l).forward);
  }
  // The rest, the head's and the multi-token-prediction depths' weights, is needed after every
  // layer: by then done.
  gather(device, {rest, rest_experts, counts_.linear_range(context_.model.layers, chunk.mtp_layers)}, spec,
         CollectiveWait{0, true});
}

void ShardedWeights::gather_updated(DeviceLowering& device, std::int64_t parameters,
                                    std::int64_t expert_parameters) const {
  const auto& plan = context_.plan;
  // ZeRO-3 and FSDP keep the updated weights sharded: the next forward gathers each layer before
  // it runs (gather_layer), so nothing is gathered after the step (PyTorch FSDP2 fully_shard:
  // FSDPParamGroup.pre_forward unshards; DeepSpeed ZeRO-3 gathers partitioned parameters in
  // its pre-forward hooks).
  if (plan.optimizer.sharding == model::OptimizerSharding::none ||
      plan.optimizer.sharding == model::OptimizerSharding::full || overlapped_gather())
    return; // with the overlap, the next forward gathers each chunk (gather_before_first_forward)
  CollectiveSpec spec;
  spec.kind = model::Collective::all_gather;
  spec.group = model::CommGroup::data;
  spec.pass = model::Pass::optimizer;
  spec.label = context_.labels.parameter_gather;
  gather(device, {parameters, expert_parameters, linear_parameters_of(device)}, spec, {});
}

} // namespace twocs::lowering::detail
