// Hugging Face config.json -> twocs workload. Field names as in the transformers library's
// configuration classes (LlamaConfig, MistralConfig, MixtralConfig, Qwen2Config, Qwen3Config,
// Qwen3MoeConfig, GPT2Config, GPTNeoXConfig, DeepseekV3Config).
#include <twocs/config/hf_import.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <twocs/error.hpp>

#include "text_check.hpp"

namespace twocs::config {
namespace {

using nlohmann::json;

/// Line and column (1-based) of byte `offset` of `text`.
SourceLocation location_at(const std::string& text, std::size_t offset, const std::string& source) {
  offset = std::min(offset, text.size());
  int line = 1, column = 1;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) { // a column per character, not byte
      ++column;
    }
  }
  return {source, line, column};
}

/// Byte offset of the value of the top-level object's `key` in `text` (valid JSON), or of the
/// object's '{' when the key is absent: where a message about that field points.
std::size_t field_offset(const std::string& text, std::string_view key) {
  int depth = 0;
  std::size_t object = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '{' || c == '[') {
      if (depth++ == 0) object = i;
    } else if (c == '}' || c == ']') {
      --depth;
    } else if (c == '"') {
      const std::size_t start = i + 1;
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\') ++i;
      const std::size_t next = text.find_first_not_of(" \t\r\n", i + 1);
      if (depth == 1 && next != std::string::npos && text[next] == ':' &&
          std::string_view(text).substr(start, i - start) == key)
        return text.find_first_not_of(" \t\r\n", next + 1);
    }
  }
  return object;
}

struct Reader {
  const json& j;
  const std::string& text;
  std::string source;

  [[noreturn]] void fail(std::string_view key, const std::string& problem, const std::string& fix) const {
    InputError error(problem, std::string(key), fix);
    error.set_location(location_at(text, field_offset(text, key), source));
    throw error;
  }
  /// A whole number that may be 0 (shared experts, dense first layers, MTP depths: Kimi K2 has
  /// num_nextn_predict_layers 0); absent or null is 0.
  [[nodiscard]] std::int64_t count_or_zero(const char* key) const {
    const auto it = j.find(key);
    if (it != j.end() && it->is_number_integer() && it->get<std::int64_t>() == 0) return 0;
    return optional(key).value_or(0);
  }
  [[nodiscard]] std::optional<std::int64_t> optional(const char* key) const {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return std::nullopt;
    if (!it->is_number_integer())
      fail(key, fmt::format("field '{}' must be a whole number, got {}", key, it->dump()),
           "check the config.json value");
    if (it->is_number_unsigned() && it->get<std::uint64_t>() > std::uint64_t{1} << 62)
      fail(key, fmt::format("field '{}' = {} is too large for any model", key, it->dump()),
           "check the config.json value");
    if (it->get<std::int64_t>() <= 0)
      fail(key, fmt::format("field '{}' must be positive, got {}", key, it->dump()), "check the config.json value");
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

struct Model {
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

/// The period K of a window pattern whose every K-th layer attends the whole prefix (the others
/// the window), or 0 when `full` does not repeat so. `full` names at least one of each kind.
std::int64_t full_attention_period(const std::vector<bool>& full) {
  const auto first = std::find(full.begin(), full.end(), true);
  const auto k = static_cast<std::int64_t>(first - full.begin()) + 1;
  for (std::size_t i = 0; i < full.size(); ++i)
    if (full[i] != ((static_cast<std::int64_t>(i) + 1) % k == 0)) return 0;
  return k;
}

/// transformers' layer_types ("sliding_attention" or "full_attention" per layer: gpt-oss, and the
/// newer configs of Qwen2/3 and Gemma): a window in every layer, in none, or every K-th layer
/// without it (model.full_attention_every).
void read_layer_types(const Reader& r, Model& m) {
  const json& types = r.j["layer_types"];
  if (!types.is_array() || static_cast<std::int64_t>(types.size()) != m.layers)
    r.fail("layer_types", fmt::format("field 'layer_types' must list one entry per layer ({})", m.layers),
           "give the model's config.json as published");
  std::vector<bool> full;
  for (const auto& t : types) {
    if (t != "full_attention" && t != "sliding_attention")
      r.fail("layer_types", fmt::format("field 'layer_types' has the entry {}, which twocs cannot map", t.dump()),
             "twocs maps \"full_attention\" and \"sliding_attention\"");
    full.push_back(t == "full_attention");
  }
  if (std::all_of(full.begin(), full.end(), [](bool f) { return f; })) return;
  m.sliding_window = r.required("sliding_window");
  if (std::none_of(full.begin(), full.end(), [](bool f) { return f; })) return;
  m.full_attention_every = full_attention_period(full);
  if (m.full_attention_every == 0)
    r.fail("layer_types",
           "field 'layer_types' mixes windowed and full layers in a pattern twocs cannot map: it models every K-th "
           "layer full and the others windowed",
           "write model.sliding_window and model.full_attention_every by hand for the nearest pattern");
}

/// Which layers attend through a window. Mistral's is in every layer (sliding_window: 4096 in
/// Mistral 7B v0.1, null from v0.2 and in Mixtral); layer_types says it per layer where given;
/// gpt-oss alternates without it (transformers' GptOssConfig default). Qwen2/Qwen3 window only the
/// layers from max_window_layers on, with use_sliding_window, which their released configs leave
/// false: refused when set without layer_types.
void read_sliding_window(const Reader& r, const std::string& type, Model& m) {
  if (type == "mistral" || type == "mixtral") {
    m.sliding_window = r.optional("sliding_window").value_or(0);
    return;
  }
  if (r.j.contains("layer_types")) return read_layer_types(r, m);
  // gpt-oss and Gemma 2 alternate (transformers' defaults); Gemma 3 keeps one global layer in
  // sliding_window_pattern (6).
  if (type == "gpt_oss" || type == "gemma2" || type == "gemma3_text") {
    m.sliding_window = r.required("sliding_window");
    m.full_attention_every = type == "gemma3_text" ? r.optional("sliding_window_pattern").value_or(6) : 2;
  }
  if ((type == "qwen2" || type == "qwen3" || type == "qwen3_moe") && r.flag("use_sliding_window", false))
    r.fail("use_sliding_window",
           "field 'use_sliding_window' is true: a window on only some layers (max_window_layers) is not modelled",
           "set it false, as the released Qwen configs do, or write model.sliding_window by hand for every layer");
}

Model llama_like(const Reader& r) {
  Model m;
  m.layers = r.required("num_hidden_layers");
  m.hidden = r.required("hidden_size");
  m.heads = r.required("num_attention_heads");
  m.kv_heads = r.optional("num_key_value_heads").value_or(m.heads);
  m.ffn = r.required("intermediate_size");
  m.vocab = r.required("vocab_size");
  m.seq = r.required("max_position_embeddings");
  if (m.heads % m.kv_heads != 0)
    r.fail("num_key_value_heads",
           fmt::format("field 'num_key_value_heads' ({}) must divide num_attention_heads ({})", m.kv_heads, m.heads),
           "grouped-query attention shares each key/value head among a whole number of query heads");
  if (auto d = r.optional("head_dim"); d && *d * m.heads != m.hidden) m.head_dim = *d;
  m.tied = r.flag("tie_word_embeddings", false);
  return m;
}

/// DeepSeek's MoE fields (DeepSeek-V2/V3, and the models that reuse them: Kimi K2, GLM-4.5):
/// the first first_k_dense_replace layers dense, then routed experts with shared ones, and the
/// multi-token-prediction depths (num_nextn_predict_layers; Megatron-Core --mtp-num-layers).
void read_deepseek_moe(const Reader& r, Model& m) {
  if (const auto freq = r.optional("moe_layer_freq"); freq && *freq != 1)
    r.fail("moe_layer_freq", fmt::format("field 'moe_layer_freq' is {}: MoE every few layers is not modelled", *freq),
           "twocs models dense first layers then every layer MoE (moe_layer_freq 1)");
  const std::int64_t experts = r.required("n_routed_experts");
  const std::int64_t top_k = r.required("num_experts_per_tok");
  if (top_k > experts)
    r.fail("num_experts_per_tok",
           fmt::format("field 'num_experts_per_tok' ({}) exceeds the number of experts ({})", top_k, experts),
           "each token is routed to at most every expert: check both fields");
  // Read in the file's order of concern, one field at a time (argument order is unspecified).
  const std::int64_t expert_ffn = r.required("moe_intermediate_size");
  const std::int64_t shared = r.count_or_zero("n_shared_experts");
  const std::int64_t dense = r.count_or_zero("first_k_dense_replace");
  m.moe = fmt::format("{{experts: {}, top_k: {}, expert_ffn_hidden: {}, shared_experts: {}, dense_layers: {}}}",
                      experts, top_k, expert_ffn, shared, dense);
  m.mtp_layers = r.count_or_zero("num_nextn_predict_layers");
}

/// DeepSeek-V2/V3 and Kimi K2 (DeepseekV3ForCausalLM): DeepSeek's MoE with multi-head latent
/// attention, whose head dims are its own keys.
Model deepseek_like(const Reader& r) {
  Model m = llama_like(r);
  m.head_dim = 0;
  read_deepseek_moe(r, m);
  const std::int64_t q_lora = r.optional("q_lora_rank").value_or(0);
  const std::int64_t kv_lora = r.required("kv_lora_rank");
  const std::int64_t nope = r.required("qk_nope_head_dim");
  const std::int64_t rope = r.required("qk_rope_head_dim");
  const std::int64_t v = r.required("v_head_dim");
  m.mla = fmt::format("{{q_lora_rank: {}, kv_lora_rank: {}, qk_nope_head_dim: {}, qk_rope_head_dim: {}, "
                      "v_head_dim: {}}}",
                      q_lora, kv_lora, nope, rope, v);
  return m;
}

Model read_model(const Reader& r, const std::string& type) {
  if (type == "deepseek_v3" || type == "deepseek_v2" || type == "kimi_k2") return deepseek_like(r);
  if (type == "glm4_moe") { // GLM-4.5: grouped-query attention (head_dim 128) with DeepSeek's MoE fields
    Model m = llama_like(r);
    read_deepseek_moe(r, m);
    return m;
  }
  if (type == "llama" || type == "mistral" || type == "qwen2") return llama_like(r);
  // Gemma 2 and Gemma 3's text model: grouped-query attention with head_dim, norms before and
  // after attention and the FFN, tied embeddings by default (Gemma2Config, Gemma3TextConfig);
  // Gemma 3 normalises queries and keys. Their GeGLU FFN (gate, up, down) is costed as SwiGLU.
  if (type == "gemma2" || type == "gemma3_text") {
    Model m = llama_like(r);
    m.tied = r.flag("tie_word_embeddings", true);
    m.post_norms = true;
    m.qk_norm = type == "gemma3_text";
    m.note = "# GeGLU (gelu_pytorch_tanh gate) is costed as SwiGLU: the same three GEMMs and bytes.\n";
    if (type == "gemma2") m.note += "# Gemma 2's attention and final logit soft-capping (tanh) are not costed.\n";
    return m;
  }
  if (type == "qwen3") { // Qwen3Attention normalises each head's query and key (q_norm, k_norm)
    Model m = llama_like(r);
    m.qk_norm = true;
    return m;
  }
  // gpt-oss: grouped-query attention (head_dim 64) and experts of intermediate_size, every layer.
  if (type == "mixtral" || type == "qwen3_moe" || type == "gpt_oss") {
    Model m = llama_like(r);
    const bool qwen = type == "qwen3_moe";
    m.qk_norm = qwen;
    if (qwen && r.j.contains("mlp_only_layers") && !r.j["mlp_only_layers"].empty())
      r.fail("mlp_only_layers",
             "field 'mlp_only_layers' cannot be mapped: dense layers between MoE layers are not modelled",
             "remove the list (every layer MoE) or write the workload by hand");
    const std::int64_t experts = r.required(qwen ? "num_experts" : "num_local_experts");
    const std::int64_t top_k = r.required("num_experts_per_tok");
    if (top_k > experts)
      r.fail("num_experts_per_tok",
             fmt::format("field 'num_experts_per_tok' ({}) exceeds the number of experts ({})", top_k, experts),
             "each token is routed to at most every expert: check both fields");
    const std::int64_t expert_ffn = qwen ? r.required("moe_intermediate_size") : m.ffn;
    m.moe = fmt::format("{{experts: {}, top_k: {}, expert_ffn_hidden: {}, shared_experts: 0, dense_layers: 0}}",
                        experts, top_k, expert_ffn);
    return m;
  }
  if (type == "gpt2") {
    Model m;
    m.layers = r.required("n_layer");
    m.hidden = r.required("n_embd");
    m.heads = r.required("n_head");
    m.kv_heads = m.heads;
    m.ffn = r.optional("n_inner").value_or(4 * m.hidden);
    m.vocab = r.required("vocab_size");
    m.seq = r.required("n_positions");
    m.norm = "layernorm";
    m.position = "learned";
    m.ffn_kind = "gelu";
    m.tied = r.flag("tie_word_embeddings", true);
    return m;
  }
  if (type == "gpt_neox") {
    Model m = llama_like(r);
    m.norm = "layernorm";
    m.ffn_kind = "gelu";
    return m;
  }
  r.fail("model_type", fmt::format("field 'model_type' is '{}', which twocs cannot map", type),
         "supported: llama, mistral, mixtral, qwen2, qwen3, qwen3_moe, deepseek_v2, deepseek_v3, kimi_k2, glm4_moe, "
         "gpt_oss, gemma2, gemma3_text, gpt2, gpt_neox");
}

/// The config.json's top-level object; an empty text, a syntax error or another JSON value is an
/// InputError at its line and column.
json parse_config(const std::string& text, const std::string& source) {
  const auto fail_at = [&](std::size_t offset, const std::string& problem) {
    InputError error(problem, {}, "give a Hugging Face config.json (a JSON object, as published with the weights)");
    error.set_location(location_at(text, offset, source));
    throw error;
  };
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) fail_at(0, "the file is empty (no JSON content)");
  if (const auto bad = detail::find_bad_byte(text)) fail_at(bad->offset, detail::describe_bad_byte(*bad));
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    std::string why = e.what(); // "[json.exception.parse_error.101] parse error at line 1, column 2: why"
    if (const std::size_t colon = why.find(": "); colon != std::string::npos) why = why.substr(colon + 2);
    fail_at(e.byte > 0 ? e.byte - 1 : 0, "not valid JSON: " + why);
  } catch (const json::exception& e) { // out_of_range.406: "number overflow parsing '1e400'"
    std::string why = e.what();
    why = why.substr(why.find("] ") == std::string::npos ? 0 : why.find("] ") + 2);
    const std::size_t quote = why.find('\'');
    const std::string token = quote == std::string::npos ? "" : why.substr(quote + 1, why.rfind('\'') - quote - 1);
    const std::size_t at = token.empty() ? std::string::npos : text.find(token);
    fail_at(at == std::string::npos ? first : at, "not valid JSON: " + why);
  }
  if (!j.is_object()) fail_at(first, fmt::format("the JSON value is {}, not an object", j.type_name()));
  return j;
}

} // namespace

std::string import_hf_config(const std::string& json_text, const std::string& source) {
  const json j = parse_config(json_text, source);
  const Reader r{j, json_text, source};
  const auto type = j.find("model_type");
  if (type == j.end() || !type->is_string())
    r.fail("model_type",
           type == j.end() ? "field 'model_type' is missing"
                           : fmt::format("field 'model_type' must be a string, got {}", type->dump()),
           "give a Hugging Face config.json (it names its model_type, e.g. \"llama\")");
  Model m = read_model(r, type->get<std::string>());
  read_sliding_window(r, type->get<std::string>(), m);
  m.dropout = r.any_dropout(type->get<std::string>() == "gpt2");
  std::string out =
      fmt::format("# Imported from {} (Hugging Face config.json, model_type {}) by twocs import hf.\n"
                  "# The training plan is a one-device placeholder: set it to the run you model.\n{}"
                  "model:\n  layers: {}\n  hidden: {}\n  heads: {}\n  kv_heads: {}\n  ffn_hidden: {}\n"
                  "  ffn_kind: {}\n  vocab: {}\n  seq_len: {}\n  norm: {}\n  position: {}\n"
                  "  attention_mask: causal\n  tied_embeddings: {}\n  dropout: {}\n",
                  source, type->get<std::string>(), m.note, m.layers, m.hidden, m.heads, m.kv_heads, m.ffn, m.ffn_kind,
                  m.vocab, m.seq, m.norm, m.position, m.tied ? "true" : "false", m.dropout ? "true" : "false");
  if (m.head_dim > 0) out += fmt::format("  head_dim: {}\n", m.head_dim);
  if (!m.moe.empty()) out += fmt::format("  moe: {}\n", m.moe);
  if (!m.mla.empty()) out += fmt::format("  mla: {}\n", m.mla);
  if (m.mtp_layers > 0) out += fmt::format("  mtp_layers: {}\n", m.mtp_layers);
  if (m.sliding_window > 0) out += fmt::format("  sliding_window: {}\n", m.sliding_window);
  if (m.full_attention_every > 0) out += fmt::format("  full_attention_every: {}\n", m.full_attention_every);
  if (m.qk_norm) out += "  qk_norm: true\n";
  if (m.post_norms) out += "  post_norms: true\n";
  out += "training:\n  global_batch: 1\n  micro_batch: 1\n  dtype: bf16\n  attention: fused\n"
         "  parallelism: {tensor: 1, pipeline: 1, data: 1}\n";
  return out;
}

} // namespace twocs::config
