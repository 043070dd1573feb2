// Private: what every unit of the iteration lowering reads and no unit changes: the model, the
// plan, the rank layout, the model chunks, the costed operator sequences and the labels of the
// tasks the lowering adds itself; and the state of one device being lowered.
#pragma once

#include <cstdint>
#include <vector>

#include <twocs/cost/operator_cost_model.hpp>
#include <twocs/lowering/device_program.hpp>
#include <twocs/lowering/rank_layout.hpp>
#include <twocs/model/stage_partition.hpp>
#include <twocs/model/training_plan.hpp>
#include <twocs/model/transformer.hpp>

#include "gradient_sync.hpp"
#include "prepared_steps.hpp"

namespace twocs::lowering::detail {

/// Labels of the tasks that come from the lowering, not from the model's operator sequences.
struct LoweringLabels {
  std::uint32_t activation = 0, gradient = 0, boundary_gather = 0;
  std::uint32_t embedding_sync = 0, parameter_gather = 0, layer_gather = 0;
  std::uint32_t mirror_sync = 0, found_inf = 0, grad_norm = 0, layernorm_grads = 0, host_micro_batch = 0,
                host_iteration = 0, fp8_amax = 0;
};

struct IterationContext {
  IterationContext(TaskSink& sink, const model::TransformerConfig& model, const model::TrainingPlan& plan,
                   const cost::OperatorCostModel& cost);

  /// The chunk in `slot` (0 .. plan.chunks_per_rank() - 1) of the stage at `at`: chunk slot p + i
  /// (interleaved); under dualpipe slot 0 is chunk i, slot 1 chunk p - 1 - i (the reverse direction).
  [[nodiscard]] const model::ModelChunk& chunk_at(const RankCoordinates& at, std::int64_t slot) const;
  /// The device of `at`'s tensor and data coordinates that runs model chunk `chunk` for the
  /// micro-batches of slot `slot`'s direction (dualpipe's reverse direction runs chunk c on p - 1 - c).
  [[nodiscard]] DeviceId device_of_chunk(const RankCoordinates& at, std::int64_t chunk, std::int64_t slot = 0) const;
  /// Whether slot `slot` runs the reverse direction of dualpipe.
  [[nodiscard]] bool reverse_direction(std::int64_t slot) const;
  /// The output layer reports the tied word-embedding gradient only when the embedding is elsewhere.
  [[nodiscard]] const PreparedSequence& head_backward(const model::ModelChunk& chunk) const;
  /// A multi-token-prediction depth's input backward on `chunk`: a last stage without the
  /// embedding keeps its own copy of an untied one and reports its gradient (Megatron-Core builds
  /// the embedding on the MTP stage and all-reduces its gradient with the first stage's,
  /// finalize_model_grads.py, _allreduce_word_embedding_grads).
  [[nodiscard]] const PreparedSequence& mtp_input_backward(const model::ModelChunk& chunk) const;
  /// Elements of one activation between layers: b s h (b s / cp h under context parallelism).
  [[nodiscard]] double activation_elements() const;
  /// Parameters whose gradients a backward of `chunk` produces (its layers, embedding, head).
  [[nodiscard]] std::int64_t gradient_parameters_of(const model::ModelChunk& chunk) const;
  /// Of those, the routed experts' (reduced and sharded over the expert-data-parallel group).
  [[nodiscard]] std::int64_t expert_gradient_parameters_of(const model::ModelChunk& chunk) const;
  /// The pass adding one micro-batch's gradients of `chunk` into the accumulated ones (empty:
  /// none), and whether micro-batch `micro_batch` pays it (model/grad_accumulation.hpp).
  [[nodiscard]] const PreparedSequence& grad_accumulation(const model::ModelChunk& chunk) const;
  [[nodiscard]] bool accumulates(std::int64_t micro_batch) const;

  TaskSink& sink;
  const model::TransformerConfig& model;
  const model::TrainingPlan& plan;
  const cost::OperatorCostModel& cost;
  RankLayout layout;
  std::vector<model::ModelChunk> chunks;
  PreparedModel ops;
  LoweringLabels labels;
  std::vector<PreparedSequence> grad_accumulation_by_chunk; // indexed as `chunks`
  bool first_micro_batch_accumulates = false;               // the plan's pass, decided once
  bool fp8_weights_cached = false;                          // LoweringOptions::fp8_weights_cached
};

/// One device being lowered: its program, its place and its gradient reduction.
struct DeviceLowering {
  DeviceProgram program;
  RankCoordinates at;
  GradientSync gradients;
  bool gradients_final = false; // inside the backward whose gradients get reduced
  bool layer_graphs = false;    // a layer's captured steps are one CUDA graph (cuda_graphs: partial)
  std::vector<bool> forwarded;  // per layer index: its forward ran on this device in this step

  [[nodiscard]] DeviceId device() const { return program.device(); }
  /// True the first time `layer` runs its forward on this device in the step (its first
  /// micro-batch, whatever the schedule numbers it), false after.
  bool first_forward(std::int64_t layer) {
    const auto index = static_cast<std::size_t>(layer);
    if (index >= forwarded.size()) forwarded.resize(index + 1, false);
    const bool first = !forwarded[index];
    forwarded[index] = true;
    return first;
  }
};

} // namespace twocs::lowering::detail
