// Private: all-gathers of weights that data-parallel replicas hold in shards.
//   Per layer (ZeRO-3 / FSDP): each layer's weights are gathered before it runs, forward and
//   backward, in every micro-batch; the gather of the next layer is prefetched while this one
//   computes (PyTorch FSDP forward/backward prefetch; Rajbhandari et al. SC'20, section 5.3).
//   After the optimizer (any sharded optimizer): every replica needs the whole updated weights
//   again (ZeRO; Megatron-LM's distributed optimizer), or, with Megatron-Core's
//   --overlap-param-gather, during the next iteration's first forward of each model chunk.
#pragma once

#include <cstdint>

#include <twocs/model/parameters.hpp>

#include "iteration_context.hpp"

namespace twocs::lowering::detail {

class ShardedWeights {
public:
  explicit ShardedWeights(const IterationContext& context);

  /// Before the layer at `position` (counted in execution order) of a chunk of `layers`, which is
  /// model layer `layer`, the next in execution order `next`: the first layer's gather, then the
  /// next layer's, due after `ops_per_layer` kernels. Each gathers its own layer's weights (a
  /// mixed model's dense and MoE layers differ), the routed experts' over the ranks holding them.
  void gather_layer(DeviceLowering& device, std::int64_t position, std::int64_t layers, int ops_per_layer,
                    std::int64_t micro_batch, std::int64_t layer, std::int64_t next) const;
  /// Before model chunk `slot`'s first forward of the iteration (micro-batch 0), when a sharded
  /// optimizer's gather overlaps the forward (training.overlap.param_gather): the device's first
  /// chunk gathers its own weights, layer by layer, each waited for by its layer's first kernel;
  /// every chunk dispatches the next chunk's gathers, which that chunk's first forward, p
  /// micro-batches later, finds done (Megatron-Core's schedules launch "param synchronization
  /// for next model chunk", schedules.py; param_and_grad_buffer.py finish_param_sync).
  void gather_before_first_forward(DeviceLowering& device, std::int64_t slot, std::int64_t micro_batch) const;
  /// After the optimizer updated this replica's shard of `parameters` parameters (nothing when
  /// the next forward gathers them).
  void gather_updated(DeviceLowering& device, std::int64_t parameters, std::int64_t expert_parameters = 0) const;

private:
  [[nodiscard]] bool overlapped_gather() const;
  /// All of a chunk's weights, in execution order: waited for by the kernels that use them, or
  /// deferred (nothing waits).
  void gather_chunk(DeviceLowering& device, const model::ModelChunk& chunk, bool waited) const;
  /// An all-gather of weights over the data group before micro-batch `micro_batch`'s forward.
  [[nodiscard]] CollectiveSpec forward_gather_spec(std::int64_t micro_batch) const;
  void gather_weights_of(DeviceLowering& device, std::int64_t layer, std::int64_t micro_batch,
                         CollectiveWait wait) const;
  /// Weights to gather: all of them, of which the routed experts' and the linear layers' (the
  /// experts included), which FP8 primary weights gather in FP8 (model/fp8_weights.hpp).
  struct Weights {
    std::int64_t parameters = 0;
    std::int64_t experts = 0;
    std::int64_t linear = 0;
  };
  /// Of a chunk's layers (`first`, `count`), their weights.
  [[nodiscard]] Weights weights_of_layers(std::int64_t first, std::int64_t count) const;
  /// The linear layers' weights of the device's chunks.
  [[nodiscard]] std::int64_t linear_parameters_of(const DeviceLowering& device) const;
  /// `spec` (its size set here) over the data group for the dense weights and over the
  /// expert-data group for the routed experts' share.
  void gather(DeviceLowering& device, const Weights& weights, const CollectiveSpec& spec, CollectiveWait wait) const;

  const IterationContext& context_;
  model::ParameterCounts counts_;
};

} // namespace twocs::lowering::detail
