#include <twocs/lowering/task_count.hpp>

#include <variant>

#include <twocs/lowering/collective.hpp>
#include <twocs/model/layer_ops.hpp>
#include <twocs/model/parameters.hpp>

namespace twocs::lowering {
namespace {

/// Tasks one device issues for `steps`: its kernels and the transfers it sends.
std::uint64_t tasks_per_device(const model::StepSequence& steps, std::int64_t tensor) {
  std::uint64_t n = 0;
  for (const auto& step : steps) {
    if (std::holds_alternative<model::ComputeOp>(step)) {
      ++n;
      continue;
    }
    const auto& c = std::get<model::CollectiveOp>(step);
    n += static_cast<std::uint64_t>(ring_plan(c.kind, static_cast<std::size_t>(tensor), c.size).steps);
  }
  return n;
}

} // namespace

std::uint64_t estimate_task_count(const model::TransformerConfig& model, const model::TrainingPlan& plan) {
  const auto shape = model::LayerShape::of(model, plan);
  const auto& p = plan.parallelism;
  const std::int64_t t = p.tensor;
  const std::uint64_t layer = tasks_per_device(model::transformer_layer_forward(shape), t) +
                              tasks_per_device(model::transformer_layer_backward(shape), t) +
                              tasks_per_device(model::transformer_layer_recompute(shape, plan.recompute), t);
  const std::uint64_t ends = tasks_per_device(model::embedding_forward(shape), t) +
                             tasks_per_device(model::embedding_backward(shape), t) +
                             tasks_per_device(model::output_head_forward(shape), t) +
                             tasks_per_device(model::output_head_backward(shape, true), t);
  const auto m = static_cast<std::uint64_t>(plan.micro_batches());
  const auto replicas = static_cast<std::uint64_t>(t * p.data);
  // Layers and the embedding/head run once per micro-batch on some stage of every replica.
  std::uint64_t total = replicas * m * (static_cast<std::uint64_t>(model.layers) * layer + ends);
  // Pipeline messages: two per micro-batch and chunk boundary, plus their tensor-parallel gathers.
  const auto boundaries = static_cast<std::uint64_t>(p.pipeline * p.virtual_stages - 1);
  total += replicas * m * boundaries * 2 * static_cast<std::uint64_t>(2 * t);
  // Gradient buckets: at most one per parameter tensor (8 per layer), each a ring of 2(d-1) steps.
  const auto d = static_cast<std::uint64_t>(p.data);
  total += replicas * static_cast<std::uint64_t>(p.pipeline) *
           (8 * static_cast<std::uint64_t>(model.layers) / static_cast<std::uint64_t>(p.pipeline) + 8) * 4 * d;
  if (plan.optimizer.sharding == model::OptimizerSharding::full)
    total += replicas * m * static_cast<std::uint64_t>(model.layers) * 2 * 2 * d;
  return total;
}

} // namespace twocs::lowering
