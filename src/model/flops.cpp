#include <twocs/model/flops.hpp>

#include <algorithm>
#include <map>
#include <utility>
#include <variant>

#include <twocs/model/layer_ops.hpp>

namespace twocs::model {
namespace {

units::Flops model_flops_of(const StepSequence& steps) {
  units::Flops total{};
  for (const auto& step : steps)
    if (const auto* op = std::get_if<ComputeOp>(&step)) total += op->model_flops();
  return total;
}

} // namespace

units::Flops model_flops_per_iteration(const TransformerConfig& model, const TrainingPlan& plan) {
  const LayerShape shape = LayerShape::of(model, plan);
  // Layers differ by their FFN (the first moe.dense_layers keep the dense one) and their attention
  // (model.full_attention_every): each kind is costed once.
  std::map<std::pair<bool, bool>, units::Flops> by_kind;
  const auto layer_flops = [&](std::int64_t index) {
    const LayerShape layer = shape.for_layer(index);
    auto [it, added] = by_kind.try_emplace(layer.kind());
    if (added)
      it->second = model_flops_of(transformer_layer_forward(layer)) + model_flops_of(transformer_layer_backward(layer));
    return it->second;
  };
  units::Flops layers;
  for (std::int64_t i = 0; i < model.layers; ++i) layers += layer_flops(i);
  const units::Flops ends = model_flops_of(embedding_forward(shape)) + model_flops_of(embedding_backward(shape)) +
                            model_flops_of(output_head_forward(shape)) +
                            model_flops_of(output_head_backward(shape, true));
  // Each multi-token-prediction depth: a layer of the last layer's kind, its projection and loss.
  const units::Flops mtp = (layer_flops(model.layers) + model_flops_of(mtp_input_forward(shape)) +
                            model_flops_of(mtp_input_backward(shape, true)) + model_flops_of(mtp_head_forward(shape)) +
                            model_flops_of(mtp_head_backward(shape))) *
                           static_cast<double>(model.mtp_layers);
  // Per micro-batch on one tensor- and context-parallel rank; every rank of the group does the same
  // share (context parallelism splits each sequence's work evenly, context_attention.cpp).
  const units::Flops per_micro_batch =
      (layers + ends + mtp) * static_cast<double>(plan.parallelism.tensor * plan.parallelism.context);
  return per_micro_batch * static_cast<double>(plan.micro_batches() * plan.parallelism.data);
}

} // namespace twocs::model
