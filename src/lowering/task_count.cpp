#include <twocs/lowering/task_count.hpp>

#include <variant>

#include <twocs/lowering/collective.hpp>
#include <twocs/model/layer_ops.hpp>
#include <twocs/model/parameters.hpp>

namespace twocs::lowering {
namespace {

/// Tasks one device issues for `steps`: its kernels and the transfers it sends (and, folded,
/// the mirrored transfers it receives: `transfers_per_step` 2 instead of 1).
std::uint64_t tasks_per_device(const model::StepSequence& steps, std::int64_t tensor,
                               std::uint64_t transfers_per_step) {
  std::uint64_t n = 0;
  for (const auto& step : steps) {
    if (std::holds_alternative<model::ComputeOp>(step)) {
      ++n;
      continue;
    }
    const auto& c = std::get<model::CollectiveOp>(step);
    n += transfers_per_step *
         static_cast<std::uint64_t>(ring_plan(c.kind, static_cast<std::size_t>(tensor), c.size).steps);
  }
  return n;
}

} // namespace

std::uint64_t estimate_task_count(const model::TransformerConfig& model, const model::TrainingPlan& plan,
                                  const LoweringOptions& options) {
  const auto shape = model::LayerShape::of(model, plan);
  const auto& p = plan.parallelism;
  const std::int64_t t = p.tensor;
  const std::uint64_t f = options.fold_replicas ? 2 : 1; // transfers per ring step a simulated device owns
  const std::uint64_t layer = tasks_per_device(model::transformer_layer_forward(shape), t, f) +
                              tasks_per_device(model::transformer_layer_backward(shape), t, f) +
                              tasks_per_device(model::transformer_layer_recompute(shape, plan.recompute), t, f);
  const std::uint64_t ends = tasks_per_device(model::embedding_forward(shape), t, f) +
                             tasks_per_device(model::embedding_backward(shape), t, f) +
                             tasks_per_device(model::output_head_forward(shape), t, f) +
                             tasks_per_device(model::output_head_backward(shape, true), t, f);
  const auto m = static_cast<std::uint64_t>(plan.micro_batches());
  // Devices simulated per pipeline stage.
  const auto replicas = options.fold_replicas ? std::uint64_t{1} : static_cast<std::uint64_t>(t * p.data);
  // Layers and the embedding/head run once per micro-batch on some stage of every replica.
  std::uint64_t total = replicas * m * (static_cast<std::uint64_t>(model.layers) * layer + ends);
  // Pipeline messages: two per micro-batch and chunk boundary, plus their tensor-parallel gathers.
  const auto boundaries = static_cast<std::uint64_t>(p.pipeline * p.virtual_stages - 1);
  total += replicas * m * boundaries * 2 * (2 * f * static_cast<std::uint64_t>(t));
  // Gradient buckets: at most one per parameter tensor (8 per layer), each a ring of 2(d-1) steps.
  const auto d = static_cast<std::uint64_t>(p.data);
  total += replicas * static_cast<std::uint64_t>(p.pipeline) *
           (8 * static_cast<std::uint64_t>(model.layers) / static_cast<std::uint64_t>(p.pipeline) + 8) * 4 * d * f;
  if (plan.optimizer.sharding == model::OptimizerSharding::full)
    total += replicas * m * static_cast<std::uint64_t>(model.layers) * 2 * 2 * d * f;
  return total;
}

} // namespace twocs::lowering
