// Which transformer layers each pipeline stage (and model chunk) holds.
//
// Rule (docs/model-reference.md): with v model chunks per stage there are p * v chunks; chunk
// c runs on stage c mod p (Megatron-LM's interleaved assignment, Narayanan et al. SC'21, 2.2).
// If parallelism.stage_layers is given it sets the layers per chunk. Otherwise, when the layers
// divide evenly over the chunks, every chunk gets layers / (p v) (Megatron-LM). When they do
// not, the embedding and the output layer weigh in as one layer each (the partition of BLOOM-176B,
// 70 layers on 12 stages: Megatron-DeepSpeed "type:transformer|embedding"): the layers + 2
// units are spread as evenly as possible, the extra units going to the chunks right after the
// first, and the first chunk gives one unit to the embedding, the last one to the output layer.
// So with layers = p v - 2 the first chunk holds only the embedding and the last only the output
// layer (Llama 3 405B: 126 layers on 16 stages x 8 chunks; Dubey et al. 2024, 3.3.2); no other
// chunk may be empty.
#pragma once

#include <cstdint>
#include <vector>

#include <twocs/model/training_plan.hpp>
#include <twocs/model/transformer.hpp>

namespace twocs::model {

struct ModelChunk {
  std::int64_t stage = 0;       // pipeline rank that runs it
  std::int64_t chunk = 0;       // position in the model, 0 = the first layers
  std::int64_t first_layer = 0; // global index of its first transformer layer
  std::int64_t layers = 0;
  bool has_embedding = false;
  bool has_output_head = false;
  /// Multi-token-prediction depths it runs after its layers (layers model.layers ..
  /// model.layers + mtp_layers - 1): all of them on the last chunk, as Megatron-Core places its
  /// MTP block on the last pipeline stage (multi_token_prediction.py, mtp_on_this_rank).
  std::int64_t mtp_layers = 0;
};

/// The p * v chunks in model order. Throws InputError when a chunk other than the first or the
/// last would get no layer.
[[nodiscard]] std::vector<ModelChunk> partition_layers(const TransformerConfig& model, const TrainingPlan& plan);

/// Whether `plan` recomputes transformer layer `layer` (global index) of `chunk` before its
/// backward: under recompute: full with training.recompute_layers = N, only the chunk's first N
/// layers (Megatron-LM's block method, megatron/core/recompute.py); its multi-token-prediction
/// depths are then not recomputed ("block-based recompute for MTP" is not implemented,
/// multi_token_prediction.py). Every layer under the other modes but none.
[[nodiscard]] bool recomputes_layer(const TrainingPlan& plan, const ModelChunk& chunk, std::int64_t layer);

/// The share of the model's transformer layers `plan` recomputes: 1 unless
/// training.recompute_layers limits full recomputation, 0 without recomputation.
[[nodiscard]] double recomputed_share(const TransformerConfig& model, const TrainingPlan& plan);

} // namespace twocs::model
