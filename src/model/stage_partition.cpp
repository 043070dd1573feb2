#include <twocs/model/stage_partition.hpp>

#include <algorithm>

#include <fmt/format.h>

#include <twocs/error.hpp>

namespace twocs::model {
namespace {

std::vector<std::int64_t> balanced_layers(std::int64_t layers, std::int64_t chunks) {
  std::vector<std::int64_t> per_chunk(static_cast<std::size_t>(chunks), layers / chunks);
  if (layers % chunks == 0) return per_chunk;
  // Embedding and output layer count as one layer each (BLOOM-176B partition).
  const std::int64_t units = layers + 2;
  const std::int64_t base = units / chunks;
  const std::int64_t extra = units % chunks;
  for (std::int64_t c = 0; c < chunks; ++c) {
    std::int64_t u = base + (c >= 1 && c <= extra ? 1 : 0);
    if (c == 0) u -= 1;
    if (c == chunks - 1) u -= 1;
    per_chunk[static_cast<std::size_t>(c)] = u;
  }
  return per_chunk;
}

} // namespace

std::vector<ModelChunk> partition_layers(const TransformerConfig& model, const TrainingPlan& plan) {
  const std::int64_t p = plan.parallelism.pipeline;
  const std::int64_t chunks = p * plan.parallelism.virtual_stages;
  std::vector<std::int64_t> per_chunk =
      plan.parallelism.stage_layers.empty() ? balanced_layers(model.layers, chunks) : plan.parallelism.stage_layers;
  std::vector<ModelChunk> result;
  std::int64_t first = 0;
  for (std::int64_t c = 0; c < chunks; ++c) {
    const std::int64_t layers = per_chunk[static_cast<std::size_t>(c)];
    // The first chunk may hold only the embedding and the last only the output layer and loss
    // (Llama 3, Dubey et al. 2024, 3.3.2; Megatron-Core --account-for-embedding-in-pipeline-split
    // and --account-for-loss-in-pipeline-split); every other chunk needs a layer.
    const bool end_chunk = c == 0 || c == chunks - 1;
    if (layers < (end_chunk ? 0 : 1))
      throw InputError(fmt::format("model chunk {} of {} would hold no transformer layer ({} layers over {} stages x "
                                   "{} virtual stages)",
                                   c, chunks, model.layers, p, plan.parallelism.virtual_stages),
                       "training.parallelism.pipeline",
                       "use fewer pipeline stages or virtual stages, or set parallelism.stage_layers");
    result.push_back({c % p, c, first, layers, c == 0, c == chunks - 1, c == chunks - 1 ? model.mtp_layers : 0});
    first += layers;
  }
  return result;
}

bool recomputes_layer(const TrainingPlan& plan, const ModelChunk& chunk, std::int64_t layer) {
  if (plan.recompute == Recompute::none) return false;
  if (!recomputes_in_blocks(plan)) return true;
  const std::int64_t position = layer - chunk.first_layer;
  return position < chunk.layers && position < plan.recompute_layers; // MTP depths come after the layers
}

double recomputed_share(const TransformerConfig& model, const TrainingPlan& plan) {
  if (plan.recompute == Recompute::none) return 0;
  if (!recomputes_in_blocks(plan)) return 1;
  std::int64_t recomputed = 0;
  for (const auto& chunk : partition_layers(model, plan)) recomputed += std::min(chunk.layers, plan.recompute_layers);
  return static_cast<double>(recomputed) / static_cast<double>(model.layers);
}

} // namespace twocs::model
