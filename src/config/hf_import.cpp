// Hugging Face config.json -> twocs workload. Field names as in the transformers library's
// configuration classes (LlamaConfig, MistralConfig, MixtralConfig, Qwen2Config, Qwen3Config,
// Qwen3MoeConfig, GPT2Config, GPTNeoXConfig, DeepseekV3Config).
#include <twocs/config/hf_import.hpp>

#include <cstdint>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <twocs/error.hpp>

namespace twocs::config {
namespace {

using nlohmann::json;

struct Reader {
  const json& j;
  std::string source;

  [[nodiscard]] std::optional<std::int64_t> optional(const char* key) const {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return std::nullopt;
    if (!it->is_number_integer() || it->get<std::int64_t>() < 0)
      throw InputError(fmt::format("{}: field '{}' must be a whole number", source, key), key,
                       "check the config.json value");
    return it->get<std::int64_t>();
  }
  [[nodiscard]] std::int64_t required(const char* key) const {
    if (auto v = optional(key)) return *v;
    throw InputError(fmt::format("{}: field '{}' is missing", source, key), key,
                     "give the model's full config.json (as published with its weights)");
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
  std::string moe; // the flow mapping, empty for dense
};

void refuse(const Reader& r, const char* key, const char* why) {
  if (r.j.contains(key) && !r.j[key].is_null())
    throw InputError(fmt::format("{}: field '{}' cannot be mapped: {}", r.source, key, why), key,
                     "twocs models standard multi-head / grouped-query attention; write the workload by hand");
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
  if (auto d = r.optional("head_dim"); d && *d * m.heads != m.hidden) m.head_dim = *d;
  m.tied = r.flag("tie_word_embeddings", false);
  return m;
}

Model read_model(const Reader& r, const std::string& type) {
  if (type == "deepseek_v3") {
    refuse(r, "kv_lora_rank", "multi-head latent attention (DeepSeek-V2/V3) is out of scope");
    refuse(r, "q_lora_rank", "multi-head latent attention (DeepSeek-V2/V3) is out of scope");
  }
  if (type == "llama" || type == "mistral" || type == "qwen2" || type == "qwen3") return llama_like(r);
  if (type == "mixtral" || type == "qwen3_moe") {
    Model m = llama_like(r);
    const bool qwen = type == "qwen3_moe";
    if (qwen && r.j.contains("mlp_only_layers") && !r.j["mlp_only_layers"].empty())
      throw InputError(fmt::format("{}: field 'mlp_only_layers' cannot be mapped: dense layers between MoE "
                                   "layers are not modelled",
                                   r.source),
                       "mlp_only_layers", "remove the list (every layer MoE) or write the workload by hand");
    const std::int64_t experts = r.required(qwen ? "num_experts" : "num_local_experts");
    const std::int64_t top_k = r.required("num_experts_per_tok");
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
  throw InputError(fmt::format("{}: field 'model_type' is '{}', which twocs cannot map", r.source, type), "model_type",
                   "supported: llama, mistral, mixtral, qwen2, qwen3, qwen3_moe, gpt2, gpt_neox");
}

} // namespace

std::string import_hf_config(const std::string& json_text, const std::string& source) {
  const json j = json::parse(json_text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw InputError(fmt::format("{} is not a JSON object", source), {}, "give a Hugging Face config.json");
  const Reader r{j, source};
  const auto type = j.find("model_type");
  if (type == j.end() || !type->is_string())
    throw InputError(fmt::format("{}: field 'model_type' is missing", source), "model_type",
                     "give a Hugging Face config.json (it names its model_type)");
  const Model m = read_model(r, type->get<std::string>());
  std::string out = fmt::format("# Imported from {} (Hugging Face config.json, model_type {}) by twocs import hf.\n"
                                "# The training plan is a one-device placeholder: set it to the run you model.\n"
                                "model:\n  layers: {}\n  hidden: {}\n  heads: {}\n  kv_heads: {}\n  ffn_hidden: {}\n"
                                "  ffn_kind: {}\n  vocab: {}\n  seq_len: {}\n  norm: {}\n  position: {}\n"
                                "  attention_mask: causal\n  tied_embeddings: {}\n",
                                source, type->get<std::string>(), m.layers, m.hidden, m.heads, m.kv_heads, m.ffn,
                                m.ffn_kind, m.vocab, m.seq, m.norm, m.position, m.tied ? "true" : "false");
  if (m.head_dim > 0) out += fmt::format("  head_dim: {}\n", m.head_dim);
  if (!m.moe.empty()) out += fmt::format("  moe: {}\n", m.moe);
  out += "training:\n  global_batch: 1\n  micro_batch: 1\n  dtype: bf16\n  attention: fused\n"
         "  parallelism: {tensor: 1, pipeline: 1, data: 1}\n";
  return out;
}

} // namespace twocs::config
