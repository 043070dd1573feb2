// The largest sizes twocs models: each far beyond any Transformer built or announced, and
// together small enough that every product of sizes the model, cost and lowering layers form
// (parameters, tokens x widths, tiles, bytes) stays exact in 64-bit integers. model::validate
// refuses a larger value, naming its key (docs/input-formats.md, "Limits").
#pragma once

#include <cstdint>

#include <twocs/model/transformer.hpp>

namespace twocs::model::limits {

inline constexpr std::int64_t layers = std::int64_t{1} << 16;
inline constexpr std::int64_t hidden = std::int64_t{1} << 18;
inline constexpr std::int64_t heads = std::int64_t{1} << 16;      // also kv_heads (which divide heads)
inline constexpr std::int64_t head_dim = std::int64_t{1} << 16;   // also MLA's per-head dims
inline constexpr std::int64_t ffn_hidden = std::int64_t{1} << 20; // also expert_ffn_hidden, shared width
inline constexpr std::int64_t vocab = std::int64_t{1} << 24;
inline constexpr std::int64_t seq_len = std::int64_t{1} << 22;   // also sliding_window
inline constexpr std::int64_t lora_rank = std::int64_t{1} << 18; // MLA's q_lora_rank and kv_lora_rank
inline constexpr std::int64_t experts = std::int64_t{1} << 16;   // routed experts (top_k is at most these)
inline constexpr std::int64_t mtp_layers = std::int64_t{1} << 16;
inline constexpr std::int64_t micro_batch = std::int64_t{1} << 16;
inline constexpr std::int64_t global_batch = std::int64_t{1} << 30;
/// Devices of one plan (tensor x context x pipeline x data): about ten times the largest
/// cluster announced. Device ids are 32-bit (lowering::DeviceId), and lowering enumerates each
/// parallel group's ranks, so a world of 2^30 devices took minutes and gigabytes before any
/// task limit could refuse it, and one past 2^31 would wrap.
inline constexpr std::int64_t devices = std::int64_t{1} << 20;
/// The whole model's parameters (about 1.1e15, 500 times the largest announced): keeps every
/// parameter count and its bytes inside 64-bit integers whatever the sizes above combine to.
inline constexpr double parameters = 1125899906842624.0; // 2^50

} // namespace twocs::model::limits

namespace twocs::model {

/// The model's parameters (every layer, the multi-token-prediction depths, the embeddings), in
/// floating point so that absurd sizes cannot overflow it; an estimate from above, within a few
/// percent for sizes that matter. validate refuses more than limits::parameters.
[[nodiscard]] double estimate_parameters(const TransformerConfig& m);

} // namespace twocs::model
