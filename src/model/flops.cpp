#include <twocs/model/flops.hpp>

#include <algorithm>
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
  LayerShape shape = LayerShape::of(model, plan);
  const auto layer_flops = [&](bool moe) {
    shape.moe_ffn = moe;
    return model_flops_of(transformer_layer_forward(shape)) + model_flops_of(transformer_layer_backward(shape));
  };
  // The first moe.dense_layers layers keep the dense FFN; the rest route to experts.
  const std::int64_t dense = model.moe ? std::min(model.moe->dense_layers, model.layers) : model.layers;
  const units::Flops layers =
      layer_flops(false) * static_cast<double>(dense) +
      (model.moe ? layer_flops(true) * static_cast<double>(model.layers - dense) : units::Flops{});
  const units::Flops ends = model_flops_of(embedding_forward(shape)) + model_flops_of(embedding_backward(shape)) +
                            model_flops_of(output_head_forward(shape)) +
                            model_flops_of(output_head_backward(shape, true));
  // Each multi-token-prediction depth: a layer of the last layer's kind, its projection and loss.
  const units::Flops mtp = (layer_flops(model.is_moe_layer(model.layers)) + model_flops_of(mtp_input_forward(shape)) +
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
