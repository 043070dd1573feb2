// Private: the forward and the backward of one model chunk for one micro-batch on one device:
// the embedding, the transformer layers (with their sharded-weight gathers), the multi-token-
// prediction depths and the output head, in the order the framework runs them.
#pragma once

#include <twocs/lowering/schedule.hpp>

#include "iteration_context.hpp"
#include "sharded_weights.hpp"
#include "weight_grad_split.hpp"

namespace twocs::lowering::detail {

class ChunkPasses {
public:
  ChunkPasses(const IterationContext& context, const ShardedWeights& weights);

  void forward(DeviceLowering& device, const WorkItem& item) const;
  /// Recomputes what the plan recomputes, then runs the backward, last layer first; only its B
  /// pass when the item defers its weight gradients.
  void backward(DeviceLowering& device, const WorkItem& item) const;
  /// The W pass of a backward that deferred it: the weight-gradient GEMMs of the output head,
  /// the depths and the layers, in the backward's order, then the gradient accumulation.
  void weight(DeviceLowering& device, const WorkItem& item) const;

  /// The pieces of a forward: what runs before the chunk's layers (the embedding), one layer
  /// (`l` of the chunk's, with its sharded-weight gather), what runs after them (the depths and
  /// the output head).
  void forward_prologue(DeviceLowering& device, const model::ModelChunk& chunk, std::int64_t micro_batch) const;
  void forward_layer(DeviceLowering& device, const model::ModelChunk& chunk, std::int64_t l,
                     std::int64_t micro_batch) const;
  void forward_epilogue(DeviceLowering& device, const model::ModelChunk& chunk, std::int64_t micro_batch) const;
  /// And of a backward: the depths and the output head, one layer (recomputed first), the
  /// embedding and the gradient accumulation.
  /// `deferred`: the B pass only (weight_grad_split.hpp).
  void backward_prologue(DeviceLowering& device, const model::ModelChunk& chunk, std::int64_t micro_batch,
                         bool deferred = false) const;
  void backward_layer(DeviceLowering& device, const model::ModelChunk& chunk, std::int64_t l, std::int64_t micro_batch,
                      bool deferred = false) const;
  void backward_epilogue(DeviceLowering& device, const model::ModelChunk& chunk, std::int64_t micro_batch,
                         bool deferred = false) const;

private:
  /// The chunk's multi-token-prediction depths after its layers (stage_partition.hpp), forward,
  /// and their backward, last depth first.
  void mtp_forward(DeviceLowering& device, const model::ModelChunk& chunk, std::int64_t micro_batch) const;
  void mtp_backward(DeviceLowering& device, const model::ModelChunk& chunk, std::int64_t micro_batch,
                    bool deferred) const;
  /// `whole`, or its B pass when `deferred`.
  [[nodiscard]] const PreparedSequence& input_part(const PreparedSequence& whole, bool deferred) const;
  /// The W pass of `whole`.
  [[nodiscard]] const PreparedSequence& weight_part(const PreparedSequence& whole) const;

  const IterationContext& context_;
  const ShardedWeights& weights_;
  WeightGradSplits splits_; // built for the schedules that defer weight gradients
};

} // namespace twocs::lowering::detail
