#include "prepared_steps.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>
#include <variant>

#include <twocs/model/fp8_weights.hpp>
#include <twocs/model/fsdp_copies.hpp>
#include <twocs/model/parameters.hpp>
#include <twocs/model/stage_partition.hpp>

namespace twocs::lowering::detail {

PreparedSequence prepare(TaskSink& sink, const model::StepSequence& steps, const cost::OperatorCostModel& cost) {
  PreparedSequence prepared;
  prepared.reserve(steps.size());
  for (const auto& step : steps) {
    PreparedStep p{step, units::Seconds(0), 0, 0};
    if (const auto* op = std::get_if<model::ComputeOp>(&step)) {
      p.duration = cost.duration(*op);
      p.clock_share = cost.clock_share(*op);
      p.label = sink.intern_label(op->name);
    } else {
      p.label = sink.intern_label(std::get<model::CollectiveOp>(step).name);
    }
    prepared.push_back(std::move(p));
  }
  return prepared;
}

int compute_ops(const PreparedSequence& steps) {
  int n = 0;
  for (const auto& p : steps) n += std::holds_alternative<model::ComputeOp>(p.step) ? 1 : 0;
  return n;
}

std::int64_t gradient_parameters(const PreparedSequence& steps) {
  std::int64_t n = 0;
  for (const auto& p : steps)
    if (const auto* op = std::get_if<model::ComputeOp>(&p.step)) n += op->grad_params;
  return n;
}

std::int64_t expert_gradient_parameters(const PreparedSequence& steps) {
  std::int64_t n = 0;
  for (const auto& p : steps)
    if (const auto* op = std::get_if<model::ComputeOp>(&p.step); op && op->expert_grads) n += op->grad_params;
  return n;
}

bool is_weight_grad(const PreparedStep& p) {
  const auto* op = std::get_if<model::ComputeOp>(&p.step);
  return op && op->kind == model::OpKind::gemm && op->grad_params > 0;
}

namespace {

/// FSDP2's copy-out opens the layer's forward and its backward (the recomputation, when there is
/// one, runs first on the re-gathered weights); its copy-in closes the backward.
void add_fsdp2_copies(const model::TrainingPlan& plan, std::int64_t parameters, std::int64_t linear,
                      model::StepSequence& forward, model::StepSequence& backward, model::StepSequence& recompute) {
  forward.insert(forward.begin(), model::fsdp_all_gather_copy_out(plan, parameters, linear, model::Pass::forward));
  auto& regathered = recompute.empty() ? backward : recompute;
  const auto pass = recompute.empty() ? model::Pass::backward : model::Pass::recompute;
  regathered.insert(regathered.begin(), model::fsdp_all_gather_copy_out(plan, parameters, linear, pass));
  backward.push_back(model::fsdp_reduce_scatter_copy_in(plan, parameters));
}

/// The chunk of each of the model's layers, the multi-token-prediction depths on the last.
std::vector<const model::ModelChunk*> chunk_of_layers(const std::vector<model::ModelChunk>& chunks,
                                                      std::int64_t all_layers) {
  std::vector<const model::ModelChunk*> of;
  of.reserve(static_cast<std::size_t>(all_layers));
  for (const auto& chunk : chunks)
    for (std::int64_t l = 0; l < chunk.layers; ++l) of.push_back(&chunk);
  while (static_cast<std::int64_t>(of.size()) < all_layers) of.push_back(&chunks.back());
  return of;
}

} // namespace

PreparedModel prepare_model(TaskSink& sink, const model::LayerShape& shape, const model::TrainingPlan& plan,
                            const cost::OperatorCostModel& cost) {
  const auto counts = model::count_parameters(shape.model, shape.tensor, shape.expert);
  const auto prepare_layer = [&](const model::LayerShape& s, std::int64_t index, bool recomputed) {
    auto forward = model::transformer_layer_forward(s);
    auto backward = model::transformer_layer_backward(s);
    auto recompute = recomputed ? model::transformer_layer_recompute(s, plan.recompute, plan.recompute_modules)
                                : model::StepSequence{};
    // torchao's Float8Linear casts the weights at every use (before FSDP2's copies, which the
    // casts read after).
    forward = model::with_float8_weight_casts(forward, plan);
    backward = model::with_float8_weight_casts(backward, plan);
    recompute = model::with_float8_weight_casts(recompute, plan);
    if (model::runs_fsdp2_copies(plan))
      add_fsdp2_copies(plan, counts.layer_range(index, 1), counts.linear_range(index, 1), forward, backward, recompute);
    PreparedSequence first_forward;
    if (model::quantizes_weights_per_step(plan))
      first_forward = prepare(sink, model::first_micro_batch_forward(forward, plan), cost);
    return PreparedLayer{prepare(sink, forward, cost), prepare(sink, backward, cost), prepare(sink, recompute, cost),
                         std::move(first_forward)};
  };
  PreparedModel ops;
  // Layers differ by their FFN (DeepSeek-V3: 3 dense layers, then MoE), their attention
  // (Gemma 3: five windowed layers, then a global one) and whether they are recomputed
  // (training.recompute_layers): each kind is prepared once, in the order the layers first use it.
  std::map<std::tuple<bool, bool, bool>, std::size_t> kinds;
  const std::int64_t all_layers = shape.model.layers + shape.model.mtp_layers;
  const auto chunks = model::partition_layers(shape.model, plan);
  const auto chunk_of = chunk_of_layers(chunks, all_layers);
  ops.kind_of_layer.reserve(static_cast<std::size_t>(all_layers));
  for (std::int64_t i = 0; i < all_layers; ++i) {
    const model::LayerShape layer = shape.for_layer(i);
    const bool recomputed = model::recomputes_layer(plan, *chunk_of[static_cast<std::size_t>(i)], i);
    const auto [ffn, attention] = layer.kind();
    const auto [it, added] = kinds.try_emplace({ffn, attention, recomputed}, ops.kinds.size());
    if (added) ops.kinds.push_back(prepare_layer(layer, i, recomputed));
    ops.kind_of_layer.push_back(it->second);
  }
  ops.embedding_forward = prepare(sink, model::embedding_forward(shape), cost);
  ops.embedding_backward = prepare(sink, model::embedding_backward(shape), cost);
  ops.head_forward = prepare(sink, model::output_head_forward(shape), cost);
  ops.head_backward_tied = prepare(sink, model::output_head_backward(shape, false), cost);
  ops.head_backward_own = prepare(sink, model::output_head_backward(shape, true), cost);
  if (shape.model.mtp_layers > 0) {
    ops.mtp_input_forward = prepare(sink, model::mtp_input_forward(shape), cost);
    ops.mtp_input_backward_shared = prepare(sink, model::mtp_input_backward(shape, false), cost);
    ops.mtp_input_backward_own = prepare(sink, model::mtp_input_backward(shape, true), cost);
    ops.mtp_head_forward = prepare(sink, model::mtp_head_forward(shape), cost);
    ops.mtp_head_backward = prepare(sink, model::mtp_head_backward(shape), cost);
  }
  return ops;
}

} // namespace twocs::lowering::detail
