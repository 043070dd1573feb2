// The mapping of each Hugging Face model_type to twocs's model keys. Field names as in the
// transformers library's configuration classes (LlamaConfig, MistralConfig, MixtralConfig,
// Qwen2Config, Qwen3Config, Qwen3MoeConfig, GPT2Config, GPTNeoXConfig, DeepseekV3Config,
// Gemma2Config, Gemma3TextConfig, GptOssConfig).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "hf_reader.hpp"

namespace twocs::config::detail {
namespace {

using nlohmann::json;

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
void read_layer_types(const HfReader& r, HfModel& m) {
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

/// What a configuration class fills in when its config.json leaves a field out.
struct Defaults {
  std::optional<std::int64_t> vocab, max_positions;
};

HfModel llama_like(const HfReader& r, const Defaults& defaults = {}) {
  HfModel m;
  m.layers = r.required("num_hidden_layers");
  m.hidden = r.required("hidden_size");
  m.heads = r.required("num_attention_heads");
  m.kv_heads = r.optional("num_key_value_heads").value_or(m.heads);
  m.ffn = r.required("intermediate_size");
  m.vocab = defaults.vocab ? r.optional("vocab_size").value_or(*defaults.vocab) : r.required("vocab_size");
  m.seq = defaults.max_positions ? r.optional("max_position_embeddings").value_or(*defaults.max_positions)
                                 : r.required("max_position_embeddings");
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
void read_deepseek_moe(const HfReader& r, HfModel& m) {
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
HfModel deepseek_like(const HfReader& r) {
  HfModel m = llama_like(r);
  m.head_dim = 0;
  read_deepseek_moe(r, m);
  const std::int64_t q_lora = r.count_or_zero("q_lora_rank");
  const std::int64_t kv_lora = r.required("kv_lora_rank");
  const std::int64_t nope = r.required("qk_nope_head_dim");
  const std::int64_t rope = r.required("qk_rope_head_dim");
  const std::int64_t v = r.required("v_head_dim");
  m.mla = fmt::format("{{q_lora_rank: {}, kv_lora_rank: {}, qk_nope_head_dim: {}, qk_rope_head_dim: {}, "
                      "v_head_dim: {}}}",
                      q_lora, kv_lora, nope, rope, v);
  return m;
}

/// Gemma 2 and Gemma 3's text model: grouped-query attention with head_dim, norms before and
/// after attention and the FFN, tied embeddings by default (Gemma2Config, Gemma3TextConfig);
/// Gemma 3 normalises queries and keys. Their GeGLU FFN (gate, up, down) is costed as SwiGLU.
HfModel gemma_like(const HfReader& r, const std::string& type) {
  // Gemma3TextConfig's defaults, which Gemma 3's multimodal configs rely on (vocab_size=262_208,
  // max_position_embeddings=131_072: transformers, configuration_gemma3.py).
  const Defaults gemma3{262208, 131072};
  HfModel m = llama_like(r, type == "gemma3_text" ? gemma3 : Defaults{});
  m.tied = r.flag("tie_word_embeddings", true);
  m.post_norms = true;
  m.qk_norm = type == "gemma3_text";
  m.note = "# GeGLU (gelu_pytorch_tanh gate) is costed as SwiGLU: the same three GEMMs and bytes.\n";
  if (type == "gemma2") m.note += "# Gemma 2's attention and final logit soft-capping (tanh) are not costed.\n";
  return m;
}

/// Experts in every layer: Mixtral, Qwen3-MoE (its own moe_intermediate_size and QK-norm) and
/// gpt-oss (grouped-query attention, head_dim 64, experts of intermediate_size).
HfModel experts_every_layer(const HfReader& r, const std::string& type) {
  HfModel m = llama_like(r);
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
  m.moe = fmt::format("{{experts: {}, top_k: {}, expert_ffn_hidden: {}, shared_experts: 0, dense_layers: 0}}", experts,
                      top_k, expert_ffn);
  return m;
}

} // namespace

/// Which layers attend through a window. Mistral's is in every layer (sliding_window: 4096 in
/// Mistral 7B v0.1, null from v0.2 and in Mixtral); layer_types says it per layer where given;
/// gpt-oss alternates without it (transformers' GptOssConfig default). Qwen2/Qwen3 window only the
/// layers from max_window_layers on, with use_sliding_window, which their released configs leave
/// false: refused when set without layer_types.
void read_hf_sliding_window(const HfReader& r, const std::string& type, HfModel& m) {
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

HfModel read_hf_model(const HfReader& r, const std::string& type) {
  if (type == "deepseek_v3" || type == "deepseek_v2" || type == "kimi_k2") return deepseek_like(r);
  if (type == "glm4_moe") { // GLM-4.5: grouped-query attention (head_dim 128) with DeepSeek's MoE fields
    HfModel m = llama_like(r);
    read_deepseek_moe(r, m);
    return m;
  }
  if (type == "llama" || type == "mistral" || type == "qwen2") return llama_like(r);
  if (type == "gemma2" || type == "gemma3_text") return gemma_like(r, type);
  if (type == "qwen3") { // Qwen3Attention normalises each head's query and key (q_norm, k_norm)
    HfModel m = llama_like(r);
    m.qk_norm = true;
    return m;
  }
  if (type == "mixtral" || type == "qwen3_moe" || type == "gpt_oss") return experts_every_layer(r, type);
  if (type == "gpt2") {
    HfModel m;
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
    HfModel m = llama_like(r);
    m.norm = "layernorm";
    m.ffn_kind = "gelu";
    return m;
  }
  r.fail("model_type", fmt::format("field 'model_type' is '{}', which twocs cannot map", type),
         "supported: llama, mistral, mixtral, qwen2, qwen3, qwen3_moe, deepseek_v2, deepseek_v3, kimi_k2, glm4_moe, "
         "gpt_oss, gemma2, gemma3_text, gpt2, gpt_neox; multimodal gemma3 and mistral3 through their text_config");
}

} // namespace twocs::config::detail
