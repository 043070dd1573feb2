#include "merged_passes.hpp"

#include <cassert>

#include <algorithm>

#include "step_emitter.hpp"

namespace twocs::lowering::detail {

MergedPasses::MergedPasses(const IterationContext& context, const ChunkPasses& passes)
    : context_(context), passes_(passes) {
  if (!context.plan.overlap.expert_comm && context.plan.pipeline_schedule != model::PipelineSchedule::dualpipe) return;
  for (const auto& kind : context.ops.kinds) cuts_.push_back(cut_layer(kind));
}

const LayerCuts& MergedPasses::cuts_at(std::int64_t layer) const { return cuts_[context_.ops.kind_at(layer)]; }

void MergedPasses::run(DeviceLowering& device, const WorkItem& forward, const WorkItem& backward) const {
  const auto& f = context_.chunk_at(device.at, forward.chunk);
  const auto& b = context_.chunk_at(device.at, backward.chunk);
  // Embedding forward, then the loss's and the output head's backward (Phase 0 of
  // TransformerModelChunkSchedulePlan.run).
  passes_.forward_prologue(device, f, forward.micro_batch);
  passes_.backward_prologue(device, b, backward.micro_batch);
  const std::int64_t pairs = std::min(f.layers, b.layers);
  for (std::int64_t i = 0; i < pairs; ++i)
    run_layer_pair(device, f.first_layer + i, forward.micro_batch, b.first_layer + b.layers - 1 - i,
                   backward.micro_batch);
  for (std::int64_t l = b.layers - 1 - pairs; l >= 0; --l) passes_.backward_layer(device, b, l, backward.micro_batch);
  for (std::int64_t l = pairs; l < f.layers; ++l) passes_.forward_layer(device, f, l, forward.micro_batch);
  passes_.forward_epilogue(device, f, forward.micro_batch);
  passes_.backward_epilogue(device, b, backward.micro_batch);
}

void MergedPasses::run_layer_pair(DeviceLowering& device, std::int64_t forward_layer, std::int64_t forward_micro_batch,
                                  std::int64_t backward_layer, std::int64_t backward_micro_batch) const {
  const LayerCuts& f = cuts_at(forward_layer);
  const LayerCuts& b = cuts_at(backward_layer);
  const auto& layout = context_.layout;
  // A merged pair's forward is never its layer's first of the step (the schedules run the first
  // micro-batch's forward alone, before any backward), so it has no weight quantization.
  [[maybe_unused]] const bool first = device.first_forward(forward_layer);
  assert(!first && "a merged pair ran a layer's first forward");
  const auto fwd = [&](const PreparedSequence& s) {
    emit_steps(device, layout, s, forward_layer, forward_micro_batch);
  };
  const auto bwd = [&](const PreparedSequence& s) {
    emit_steps(device, layout, s, backward_layer, backward_micro_batch);
  };
  // Launch order of TransformerLayerSchedulePlan.run. Each exchange leaves after the kernels it
  // needs and lets the other micro-batch's kernels launched before its consumer run meanwhile:
  //   exchanges: combine_bwd | dispatch_fwd -> dispatch_bwd | combine_fwd
  //   kernels:   pre_dispatch_fwd | mlp_bwd -> mlp_bwd_dw -> mlp_fwd | pre_dispatch_bwd
  bwd(b.combine_input_grad);
  emit_exchange(device, layout, b.combine_backward, compute_ops(f.pre_dispatch), backward_layer, backward_micro_batch);
  fwd(f.pre_dispatch);
  emit_exchange(device, layout, f.dispatch, compute_ops(b.experts_backward) + compute_ops(b.experts_wgrad),
                forward_layer, forward_micro_batch);
  bwd(b.experts_backward);
  emit_exchange(device, layout, b.dispatch_backward, compute_ops(b.experts_wgrad) + compute_ops(f.experts),
                backward_layer, backward_micro_batch);
  bwd(b.experts_wgrad);
  fwd(f.experts);
  emit_exchange(device, layout, f.combine, compute_ops(b.pre_dispatch_backward), forward_layer, forward_micro_batch);
  bwd(b.pre_dispatch_backward);
  fwd(f.post_combine);
}

} // namespace twocs::lowering::detail
