// Private: Megatron-Core's combined 1F1B step (training.overlap.expert_comm): one micro-batch's
// forward of a model chunk and another's backward, run layer by layer so that each one's MoE
// token exchanges run under the other's computation (megatron/core/pipeline_parallel/
// combined_1f1b.py; models/common/model_chunk_schedule_plan.py, TransformerLayerSchedulePlan.run
// and TransformerModelChunkSchedulePlan.run).
#pragma once

#include <vector>

#include <twocs/lowering/schedule.hpp>

#include "chunk_passes.hpp"
#include "layer_cuts.hpp"

namespace twocs::lowering::detail {

class MergedPasses {
public:
  MergedPasses(const IterationContext& context, const ChunkPasses& passes);

  /// The forward `forward` and the backward `backward` as one step: the forward's first layer
  /// with the backward's last, and so on; the layers one chunk has beyond the other run alone.
  void run(DeviceLowering& device, const WorkItem& forward, const WorkItem& backward) const;

private:
  void run_layer_pair(DeviceLowering& device, std::int64_t forward_layer, std::int64_t forward_micro_batch,
                      std::int64_t backward_layer, std::int64_t backward_micro_batch) const;
  [[nodiscard]] const LayerCuts& cuts_at(std::int64_t layer) const;

  const IterationContext& context_;
  const ChunkPasses& passes_;
  std::vector<LayerCuts> cuts_; // per kind of layer (PreparedModel::kinds)
};

} // namespace twocs::lowering::detail
