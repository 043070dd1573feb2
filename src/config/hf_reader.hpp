// Reading a Hugging Face config.json's model (private to the config layer): the object reader
// that locates errors, and the mapping of each model_type to twocs's model keys.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace twocs::config::detail {

/// Reads one JSON object of a config.json (the top level, or a multimodal config's text_config)
/// and locates its errors in the file's text.
struct HfReader {
  const nlohmann::json& j;
  const std::string& text;
  std::string source;
  std::size_t object = 0; // byte offset of j's '{' in text (a nested text_config's, or 0)

  /// An InputError at `key`'s value in this object (at the object's '{' when the key is absent).
  [[noreturn]] void fail(std::string_view key, const std::string& problem, const std::string& fix) const;
  /// A whole number that may be 0 (shared experts, dense first layers, MTP depths: Kimi K2 has
  /// num_nextn_predict_layers 0); absent or null is 0.
  [[nodiscard]] std::int64_t count_or_zero(const char* key) const { return optional(key, 0).value_or(0); }
  /// A whole number of at least `low` (1: a count), or none when absent or null.
  [[nodiscard]] std::optional<std::int64_t> optional(const char* key, std::int64_t low = 1) const {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return std::nullopt;
    if (!it->is_number_integer())
      fail(key, fmt::format("field '{}' must be a whole number, got {}", key, it->dump()),
           "check the config.json value");
    if (it->is_number_unsigned() && it->get<std::uint64_t>() > std::uint64_t{1} << 62)
      fail(key, fmt::format("field '{}' = {} is too large for any model", key, it->dump()),
           "check the config.json value");
    if (it->get<std::int64_t>() < low)
      fail(key,
           low == 1 ? fmt::format("field '{}' must be positive, got {}", key, it->dump())
                    : fmt::format("field '{}' must be at least {}, got {}", key, low, it->dump()),
           low == 1 ? "check the config.json value" : fmt::format("check the config.json value: at least {}", low));
    return it->get<std::int64_t>();
  }
  [[nodiscard]] std::int64_t required(const char* key) const {
    if (auto v = optional(key)) return *v;
    fail(key, fmt::format("field '{}' is missing", key),
         "give the model's full config.json (as published with its weights)");
  }
  /// Whether any of the config's dropout probabilities is above zero (Llama, Mistral, Qwen:
  /// attention_dropout 0.0; GPT-2: resid_pdrop, attn_pdrop 0.1; GPT-NeoX: hidden_dropout);
  /// `absent` when it names none (transformers' GPT2Config defaults them to 0.1).
  [[nodiscard]] bool any_dropout(bool absent) const {
    bool named = false;
    for (const char* key : {"attention_dropout", "hidden_dropout", "resid_pdrop", "attn_pdrop", "embd_pdrop"}) {
      const auto it = j.find(key);
      if (it == j.end() || !it->is_number()) continue;
      named = true;
      if (it->get<double>() > 0) return true;
    }
    return named ? false : absent;
  }
  [[nodiscard]] bool flag(const char* key, bool fallback) const {
    const auto it = j.find(key);
    return it != j.end() && it->is_boolean() ? it->get<bool>() : fallback;
  }
};

/// A model read from a config.json, as the workload's model: block will spell it.
struct HfModel {
  std::int64_t layers = 0, hidden = 0, heads = 0, kv_heads = 0, ffn = 0, vocab = 0, seq = 0, head_dim = 0;
  std::string norm = "rmsnorm", position = "rope", ffn_kind = "swiglu";
  bool tied = false;
  bool dropout = false;
  std::string moe;
  std::string mla;             // the flow mapping, empty without latent attention
  std::int64_t mtp_layers = 0; // num_nextn_predict_layers
  std::int64_t sliding_window = 0;
  std::int64_t full_attention_every = 0;
  bool qk_norm = false;    // Qwen3's and Gemma 3's q_norm and k_norm
  bool post_norms = false; // Gemma's sandwich norms
  std::string note;        // a line for the workload's header: what the mapping approximates
};

/// The model of a config whose (text) model_type is `type`; an unknown type or a field that
/// cannot be mapped is an InputError naming it.
[[nodiscard]] HfModel read_hf_model(const HfReader& r, const std::string& type);
/// The window keys: Mistral's sliding_window, layer_types, Gemma's and gpt-oss's patterns.
void read_hf_sliding_window(const HfReader& r, const std::string& type, HfModel& m);

} // namespace twocs::config::detail
