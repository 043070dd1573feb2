#include "iteration_context.hpp"

#include <twocs/model/grad_accumulation.hpp>
#include <twocs/model/layer_ops.hpp>

namespace twocs::lowering::detail {

IterationContext::IterationContext(TaskSink& sink_, const model::TransformerConfig& model_,
                                   const model::TrainingPlan& plan_, const cost::OperatorCostModel& cost_)
    : sink(sink_), model(model_), plan(plan_), cost(cost_), layout(plan_.parallelism),
      chunks(model::partition_layers(model_, plan_)),
      ops(prepare_model(sink_, model::LayerShape::of(model_, plan_, cost_.fp8_gemms_any_layout()), plan_, cost_)) {
  labels.activation = sink.intern_label("pp.activation");
  labels.gradient = sink.intern_label("pp.gradient");
  labels.boundary_gather = sink.intern_label("pp.all_gather");
  labels.embedding_sync = sink.intern_label("embedding.grad.all_reduce");
  labels.parameter_gather = sink.intern_label("params.all_gather");
  labels.layer_gather = sink.intern_label("params.all_gather.layer");
  labels.mirror_sync = sink.intern_label("dualpipe.grad.all_reduce");
  labels.found_inf = sink.intern_label("optimizer.found_inf.all_reduce");
  labels.grad_norm = sink.intern_label("optimizer.grad_norm.all_reduce");
  labels.layernorm_grads = sink.intern_label("sp.layernorm_grads.all_reduce");
  labels.host_micro_batch = sink.intern_label("host.micro_batch");
  labels.host_iteration = sink.intern_label("host.iteration");
  labels.fp8_amax = sink.intern_label("fp8.amax.all_reduce");
  first_micro_batch_accumulates = model::grad_accumulation_pass(plan).first_micro_batch;
  grad_accumulation_by_chunk.reserve(chunks.size());
  for (const auto& chunk : chunks)
    grad_accumulation_by_chunk.push_back(
        prepare(sink, model::grad_accumulation_steps(gradient_parameters_of(chunk), plan), cost));
}

std::int64_t IterationContext::gradient_parameters_of(const model::ModelChunk& chunk) const {
  std::int64_t total = 0;
  for (std::int64_t l = chunk.first_layer; l < chunk.first_layer + chunk.layers; ++l)
    total += gradient_parameters(ops.layer_at(l).backward);
  if (chunk.has_embedding) total += gradient_parameters(ops.embedding_backward);
  if (chunk.has_output_head) total += gradient_parameters(head_backward(chunk));
  for (std::int64_t k = 0; k < chunk.mtp_layers; ++k)
    total += gradient_parameters(ops.layer_at(model.layers + k).backward) + gradient_parameters(ops.mtp_head_backward) +
             gradient_parameters(mtp_input_backward(chunk));
  return total;
}

std::int64_t IterationContext::expert_gradient_parameters_of(const model::ModelChunk& chunk) const {
  std::int64_t total = 0;
  for (std::int64_t l = chunk.first_layer; l < chunk.first_layer + chunk.layers; ++l)
    total += expert_gradient_parameters(ops.layer_at(l).backward);
  for (std::int64_t k = 0; k < chunk.mtp_layers; ++k)
    total += expert_gradient_parameters(ops.layer_at(model.layers + k).backward);
  return total;
}

const PreparedSequence& IterationContext::grad_accumulation(const model::ModelChunk& chunk) const {
  const auto index = static_cast<std::size_t>(&chunk - chunks.data());
  return grad_accumulation_by_chunk[index];
}

bool IterationContext::accumulates(std::int64_t micro_batch) const {
  return micro_batch > 0 || first_micro_batch_accumulates;
}

bool IterationContext::reverse_direction(std::int64_t slot) const {
  return slot == 1 && plan.pipeline_schedule == model::PipelineSchedule::dualpipe;
}

const model::ModelChunk& IterationContext::chunk_at(const RankCoordinates& at, std::int64_t slot) const {
  const std::int64_t p = plan.parallelism.pipeline;
  if (reverse_direction(slot)) return chunks[static_cast<std::size_t>(p - 1 - at.pipeline)];
  return chunks[static_cast<std::size_t>(slot * p + at.pipeline)];
}

DeviceId IterationContext::device_of_chunk(const RankCoordinates& at, std::int64_t chunk, std::int64_t slot) const {
  const std::int64_t p = plan.parallelism.pipeline;
  RankCoordinates c = at;
  c.pipeline = reverse_direction(slot) ? p - 1 - chunk % p : chunk % p;
  return layout.rank(c);
}

const PreparedSequence& IterationContext::head_backward(const model::ModelChunk& chunk) const {
  return chunks.front().stage == chunk.stage ? ops.head_backward_tied : ops.head_backward_own;
}

const PreparedSequence& IterationContext::mtp_input_backward(const model::ModelChunk& chunk) const {
  const bool own_copy = model.mtp_keeps_embedding_copy(chunks.front().stage == chunk.stage);
  return own_copy ? ops.mtp_input_backward_own : ops.mtp_input_backward_shared;
}

double IterationContext::activation_elements() const {
  // Under context parallelism a stage sends its s / cp tokens (cp divides s: model/validate.cpp).
  const std::int64_t local_seq = model.seq_len / plan.parallelism.context;
  return static_cast<double>(plan.micro_batch * local_seq * model.hidden);
}

} // namespace twocs::lowering::detail
