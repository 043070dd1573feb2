#include <twocs/model/flops.hpp>

#include <variant>

#include <twocs/model/layer_ops.hpp>

namespace twocs::model {
namespace {

units::Flops model_flops_of(const StepSequence& steps) {
  units::Flops total{};
  for (const auto& step : steps)
    if (const auto* op = std::get_if<ComputeOp>(&step); op && op->is_model_flop()) total += op->flops;
  return total;
}

} // namespace

units::Flops model_flops_per_iteration(const TransformerConfig& model, const TrainingPlan& plan) {
  const LayerShape shape = LayerShape::of(model, plan);
  const units::Flops layer =
      model_flops_of(transformer_layer_forward(shape)) + model_flops_of(transformer_layer_backward(shape));
  const units::Flops ends = model_flops_of(embedding_forward(shape)) + model_flops_of(embedding_backward(shape)) +
                            model_flops_of(output_head_forward(shape)) +
                            model_flops_of(output_head_backward(shape, true));
  // Per micro-batch on one tensor-parallel rank; every rank of the group does the same share.
  const units::Flops per_micro_batch =
      (layer * static_cast<double>(model.layers) + ends) * static_cast<double>(plan.parallelism.tensor);
  return per_micro_batch * static_cast<double>(plan.micro_batches() * plan.parallelism.data);
}

} // namespace twocs::model
