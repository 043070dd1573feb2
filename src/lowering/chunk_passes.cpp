#include "chunk_passes.hpp"

#include "step_emitter.hpp"
#include "step_synchronisation.hpp"

namespace twocs::lowering::detail {
namespace {

bool defers_weight_grads(const model::TrainingPlan& plan) {
  return plan.pipeline_schedule == model::PipelineSchedule::zb_h1 ||
         plan.pipeline_schedule == model::PipelineSchedule::dualpipe;
}

} // namespace

ChunkPasses::ChunkPasses(const IterationContext& context, const ShardedWeights& weights)
    : context_(context), weights_(weights) {
  if (defers_weight_grads(context.plan)) splits_ = WeightGradSplits(context.ops);
}

const PreparedSequence& ChunkPasses::input_part(const PreparedSequence& whole, bool deferred) const {
  return deferred ? splits_.of(whole).input_grad : whole;
}

const PreparedSequence& ChunkPasses::weight_part(const PreparedSequence& whole) const {
  return splits_.of(whole).weight_grad;
}

void ChunkPasses::forward(DeviceLowering& device, const WorkItem& item) const {
  const auto& chunk = context_.chunk_at(device.at, item.chunk);
  weights_.gather_before_first_forward(device, item.chunk, item.micro_batch);
  forward_prologue(device, chunk, item.micro_batch);
  for (std::int64_t l = 0; l < chunk.layers; ++l) forward_layer(device, chunk, l, item.micro_batch);
  forward_epilogue(device, chunk, item.micro_batch);
}

void ChunkPasses::backward(DeviceLowering& device, const WorkItem& item) const {
  const auto& chunk = context_.chunk_at(device.at, item.chunk);
  const bool deferred = item.weight_deferred;
  backward_prologue(device, chunk, item.micro_batch, deferred);
  for (std::int64_t l = chunk.layers - 1; l >= 0; --l) backward_layer(device, chunk, l, item.micro_batch, deferred);
  backward_epilogue(device, chunk, item.micro_batch, deferred);
}

void ChunkPasses::weight(DeviceLowering& device, const WorkItem& item) const {
  const auto& chunk = context_.chunk_at(device.at, item.chunk);
  const auto& ops = context_.ops;
  const auto& layout = context_.layout;
  const auto w = [&](const PreparedSequence& whole, std::int64_t layer) {
    emit_steps(device, layout, weight_part(whole), layer, item.micro_batch);
  };
  for (std::int64_t k = chunk.mtp_layers - 1; k >= 0; --k) {
    w(ops.mtp_head_backward, -1);
    w(ops.layer_at(context_.model.layers + k).backward, context_.model.layers + k);
    w(context_.mtp_input_backward(chunk), -1);
  }
  if (chunk.has_output_head) w(context_.head_backward(chunk), -1);
  for (std::int64_t l = chunk.layers - 1; l >= 0; --l)
    w(ops.layer_at(chunk.first_layer + l).backward, chunk.first_layer + l);
  if (chunk.has_embedding) w(ops.embedding_backward, -1);
  if (context_.accumulates(item.micro_batch))
    emit_steps(device, layout, context_.grad_accumulation(chunk), -1, item.micro_batch);
}

void ChunkPasses::forward_prologue(DeviceLowering& device, const model::ModelChunk& chunk,
                                   std::int64_t micro_batch) const {
  if (chunk.has_embedding) emit_steps(device, context_.layout, context_.ops.embedding_forward, -1, micro_batch);
}

void ChunkPasses::forward_layer(DeviceLowering& device, const model::ModelChunk& chunk, std::int64_t l,
                                std::int64_t micro_batch) const {
  const auto& layer = context_.ops.layer_at(chunk.first_layer + l);
  const auto& forward = layer.forward_of(device.first_forward(chunk.first_layer + l));
  weights_.gather_layer(device, l, chunk.layers, compute_ops(forward), micro_batch, chunk.first_layer + l,
                        chunk.first_layer + l + 1);
  emit_steps(device, context_.layout, forward, chunk.first_layer + l, micro_batch);
}

void ChunkPasses::forward_epilogue(DeviceLowering& device, const model::ModelChunk& chunk,
                                   std::int64_t micro_batch) const {
  reduce_fp8_amax(context_, device, chunk, model::Pass::forward, micro_batch); // the block's fp8_autocast exits
  mtp_forward(device, chunk, micro_batch);
  if (chunk.has_output_head) emit_steps(device, context_.layout, context_.ops.head_forward, -1, micro_batch);
}

void ChunkPasses::backward_prologue(DeviceLowering& device, const model::ModelChunk& chunk, std::int64_t micro_batch,
                                    bool deferred) const {
  // The depths' losses first: the main head's backward then reports the shared output weight.
  mtp_backward(device, chunk, micro_batch, deferred);
  if (chunk.has_output_head)
    emit_steps(device, context_.layout, input_part(context_.head_backward(chunk), deferred), -1, micro_batch);
}

void ChunkPasses::backward_layer(DeviceLowering& device, const model::ModelChunk& chunk, std::int64_t l,
                                 std::int64_t micro_batch, bool deferred) const {
  const auto& layer = context_.ops.layer_at(chunk.first_layer + l);
  const int ops_per_layer = compute_ops(layer.recompute) + compute_ops(layer.backward);
  weights_.gather_layer(device, chunk.layers - 1 - l, chunk.layers, ops_per_layer, micro_batch, chunk.first_layer + l,
                        chunk.first_layer + l - 1);
  emit_steps(device, context_.layout, layer.recompute, chunk.first_layer + l, micro_batch);
  emit_steps(device, context_.layout, input_part(layer.backward, deferred), chunk.first_layer + l, micro_batch);
}

void ChunkPasses::backward_epilogue(DeviceLowering& device, const model::ModelChunk& chunk, std::int64_t micro_batch,
                                    bool deferred) const {
  reduce_fp8_amax(context_, device, chunk, model::Pass::backward, micro_batch); // after the first layer's QKV
  if (chunk.has_embedding)
    emit_steps(device, context_.layout, input_part(context_.ops.embedding_backward, deferred), -1, micro_batch);
  // A deferred backward accumulates its gradients after its W pass (weight()).
  if (!deferred && context_.accumulates(micro_batch))
    emit_steps(device, context_.layout, context_.grad_accumulation(chunk), -1, micro_batch);
}

void ChunkPasses::mtp_forward(DeviceLowering& device, const model::ModelChunk& chunk, std::int64_t micro_batch) const {
  const auto& ops = context_.ops;
  const auto& layout = context_.layout;
  for (std::int64_t k = 0; k < chunk.mtp_layers; ++k) {
    const std::int64_t index = context_.model.layers + k; // Megatron-Core numbers them after the model's
    const auto& forward = ops.layer_at(index).forward_of(device.first_forward(index));
    emit_steps(device, layout, ops.mtp_input_forward, -1, micro_batch);
    weights_.gather_layer(device, 0, 1, compute_ops(forward), micro_batch, index, index);
    emit_steps(device, layout, forward, index, micro_batch);
    emit_steps(device, layout, ops.mtp_head_forward, -1, micro_batch);
  }
}

void ChunkPasses::mtp_backward(DeviceLowering& device, const model::ModelChunk& chunk, std::int64_t micro_batch,
                               bool deferred) const {
  const auto& ops = context_.ops;
  const auto& layout = context_.layout;
  for (std::int64_t k = chunk.mtp_layers - 1; k >= 0; --k) {
    const std::int64_t index = context_.model.layers + k;
    const auto& layer = ops.layer_at(index);
    emit_steps(device, layout, input_part(ops.mtp_head_backward, deferred), -1, micro_batch);
    weights_.gather_layer(device, 0, 1, compute_ops(layer.recompute) + compute_ops(layer.backward), micro_batch, index,
                          index);
    emit_steps(device, layout, layer.recompute, index, micro_batch);
    emit_steps(device, layout, input_part(layer.backward, deferred), index, micro_batch);
    emit_steps(device, layout, input_part(context_.mtp_input_backward(chunk), deferred), -1, micro_batch);
  }
}

} // namespace twocs::lowering::detail
