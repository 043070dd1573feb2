// `twocs import hf`: Hugging Face config.json files (written here, no network) become workloads.
#include <doctest/doctest.h>

#include <twocs/config/hf_import.hpp>
#include <twocs/config/scenario_loader.hpp>
#include <twocs/error.hpp>

#include "config/input_error_capture.hpp"

using namespace twocs;

namespace {

config::Workload import(const std::string& json) {
  return config::parse_workload({"imported.yaml", config::import_hf_config(json, "config.json")});
}

} // namespace

TEST_CASE("a Llama 3.1 8B config.json becomes an untied RMSNorm/RoPE/SwiGLU GQA workload") {
  const auto w = import(R"({"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096,
    "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
    "vocab_size": 128256, "max_position_embeddings": 131072, "tie_word_embeddings": false,
    "rms_norm_eps": 1e-05, "rope_theta": 500000.0})");
  CHECK(w.model.layers == 32);
  CHECK(w.model.kv_heads == 8);
  CHECK(w.model.ffn_hidden == 14336);
  CHECK(w.model.ffn_kind == model::FfnKind::swiglu);
  CHECK(w.model.norm == model::NormKind::rmsnorm);
  CHECK(w.model.position == model::PositionKind::rope);
  CHECK_FALSE(w.model.tied_embeddings);
  CHECK(w.model.seq_len == 131072);
  CHECK_FALSE(w.model.dropout); // no dropout named: none (the released config says attention_dropout 0.0)
  const auto d = import(R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
    "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 256, "max_position_embeddings": 128,
    "attention_dropout": 0.1})");
  CHECK(d.model.dropout);
}

TEST_CASE("Qwen3-MoE and Mixtral configs map their experts, Qwen3 keeps its head_dim") {
  const auto q = import(R"({"model_type": "qwen3_moe", "num_hidden_layers": 94, "hidden_size": 4096,
    "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 128, "intermediate_size": 12288,
    "moe_intermediate_size": 1536, "num_experts": 128, "num_experts_per_tok": 8, "vocab_size": 151936,
    "max_position_embeddings": 40960, "tie_word_embeddings": false, "mlp_only_layers": []})");
  REQUIRE(q.model.moe.has_value());
  CHECK(q.model.moe->experts == 128);
  CHECK(q.model.moe->top_k == 8);
  CHECK(q.model.moe->expert_ffn_hidden == 1536);
  CHECK(q.model.head_dim() == 128);
  CHECK(q.model.qk_norm); // Qwen3Attention's q_norm and k_norm
  CHECK(import(R"({"model_type": "qwen3", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
    "intermediate_size": 128, "vocab_size": 256, "max_position_embeddings": 128})")
            .model.qk_norm);
  const auto x = import(R"({"model_type": "mixtral", "num_hidden_layers": 56, "hidden_size": 6144,
    "num_attention_heads": 48, "num_key_value_heads": 8, "intermediate_size": 16384,
    "num_local_experts": 8, "num_experts_per_tok": 2, "vocab_size": 32768, "max_position_embeddings": 65536})");
  CHECK(x.model.moe->experts == 8);
  CHECK(x.model.moe->expert_ffn_hidden == 16384);
  CHECK_FALSE(x.model.qk_norm);
}

TEST_CASE("Mistral's sliding window carries over, null means none, Qwen's partial window is refused") {
  const std::string mistral = R"({"model_type": "mistral", "num_hidden_layers": 32, "hidden_size": 4096,
    "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000,
    "max_position_embeddings": 32768, "sliding_window": )";
  CHECK(import(mistral + "4096}").model.sliding_window == 4096); // Mistral 7B v0.1
  CHECK(import(mistral + "null}").model.sliding_window == 0);    // v0.3
  const auto qwen = test::input_error_of([] {
    (void)config::import_hf_config(R"({"model_type": "qwen2", "num_hidden_layers": 2, "hidden_size": 64,
      "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 256, "max_position_embeddings": 128,
      "use_sliding_window": true, "sliding_window": 64, "max_window_layers": 1})",
                                   "config.json");
  });
  CHECK(std::string(qwen.problem()).find("'use_sliding_window' is true") != std::string::npos);
  CHECK(qwen.key_path() == "use_sliding_window");
}

TEST_CASE("gpt-oss alternates windowed and full layers, its layer_types read as every 2nd layer full") {
  // openai/gpt-oss-120b's config.json (its layer_types shortened to the 4 layers given here).
  const std::string head = R"({"model_type": "gpt_oss", "num_hidden_layers": 4, "hidden_size": 2880,
    "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64, "intermediate_size": 2880,
    "num_local_experts": 128, "num_experts_per_tok": 4, "vocab_size": 201088,
    "max_position_embeddings": 131072, "tie_word_embeddings": false, "sliding_window": 128)";
  const auto w = import(head + R"(, "layer_types": ["sliding_attention", "full_attention",
    "sliding_attention", "full_attention"]})");
  CHECK(w.model.sliding_window == 128);
  CHECK(w.model.full_attention_every == 2);
  CHECK(w.model.window_at(0) == 128);
  CHECK(w.model.window_at(1) == 0);
  CHECK(w.model.head_dim() == 64);
  REQUIRE(w.model.moe.has_value());
  CHECK(w.model.moe->experts == 128);
  CHECK(w.model.moe->top_k == 4);
  CHECK(w.model.moe->expert_ffn_hidden == 2880);
  // Without layer_types, transformers' GptOssConfig alternates the same way.
  CHECK(import(head + "}").model.full_attention_every == 2);
  // Every layer windowed, or none.
  const auto all_windowed = import(head + R"(, "layer_types": ["sliding_attention", "sliding_attention",
    "sliding_attention", "sliding_attention"]})");
  CHECK(all_windowed.model.sliding_window == 128);
  CHECK(all_windowed.model.full_attention_every == 0);
  const auto none = import(head + R"(, "layer_types": ["full_attention", "full_attention", "full_attention",
    "full_attention"]})");
  CHECK(none.model.sliding_window == 0);
}

TEST_CASE("Gemma 2 and Gemma 3 map their sandwich norms, windows, tied embeddings and Gemma 3's QK-norm") {
  const std::string gemma = R"("num_hidden_layers": 62, "hidden_size": 5376, "num_attention_heads": 32,
    "num_key_value_heads": 16, "head_dim": 128, "intermediate_size": 21504, "vocab_size": 262208,
    "max_position_embeddings": 131072, "hidden_activation": "gelu_pytorch_tanh")";
  // Gemma 3 27B: five local layers of 1,024 tokens per global one.
  const auto g3 =
      import(R"({"model_type": "gemma3_text", )" + gemma + R"(, "sliding_window": 1024, "sliding_window_pattern": 6})");
  CHECK(g3.model.post_norms);
  CHECK(g3.model.qk_norm);
  CHECK(g3.model.tied_embeddings); // Gemma3TextConfig's default
  CHECK(g3.model.sliding_window == 1024);
  CHECK(g3.model.full_attention_every == 6);
  CHECK(g3.model.ffn_kind == model::FfnKind::swiglu); // GeGLU, costed as SwiGLU
  const auto text = config::import_hf_config(
      R"({"model_type": "gemma3_text", )" + gemma + R"(, "sliding_window": 1024})", "config.json");
  CHECK(text.find("costed as SwiGLU") != std::string::npos);
  // Gemma 2: alternating, no QK-norm; soft-capping named as not costed.
  const std::string g2_json = R"({"model_type": "gemma2", )" + gemma + R"(, "sliding_window": 4096})";
  const auto g2 = import(g2_json);
  CHECK(g2.model.post_norms);
  CHECK_FALSE(g2.model.qk_norm);
  CHECK(g2.model.full_attention_every == 2);
  CHECK(config::import_hf_config(g2_json, "config.json").find("soft-capping") != std::string::npos);
}

TEST_CASE("layer_types that twocs cannot map name the field") {
  const auto error_of = [](const std::string& types) {
    return test::input_error_of([&] {
      (void)config::import_hf_config(R"({"model_type": "qwen3", "num_hidden_layers": 4, "hidden_size": 64,
        "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 256, "max_position_embeddings": 128,
        "sliding_window": 32, "layer_types": )" +
                                         types + "}",
                                     "config.json");
    });
  };
  // Qwen's max_window_layers pattern: full first, windowed after.
  const auto irregular = error_of(R"(["full_attention", "full_attention", "sliding_attention", "sliding_attention"])");
  CHECK(irregular.key_path() == "layer_types");
  CHECK(std::string(irregular.problem()).find("a pattern twocs cannot map") != std::string::npos);
  CHECK(error_of(R"(["full_attention"])").key_path() == "layer_types"); // one entry for 4 layers
  const auto unknown = error_of(R"(["chunked_attention", "full_attention", "full_attention", "full_attention"])");
  CHECK(std::string(unknown.problem()).find("\"chunked_attention\"") != std::string::npos);
}

TEST_CASE("GPT-2 keeps LayerNorm, learned positions, GeLU and tied embeddings") {
  const auto g = import(R"({"model_type": "gpt2", "n_layer": 12, "n_embd": 768, "n_head": 12,
    "vocab_size": 50257, "n_positions": 1024})");
  CHECK(g.model.norm == model::NormKind::layernorm);
  CHECK(g.model.position == model::PositionKind::learned);
  CHECK(g.model.ffn_kind == model::FfnKind::gelu);
  CHECK(g.model.ffn_hidden == 4 * 768);
  CHECK(g.model.tied_embeddings);
  CHECK(g.model.dropout); // GPT2Config's resid_pdrop and attn_pdrop default to 0.1
  const auto off = import(R"({"model_type": "gpt2", "n_layer": 2, "n_embd": 64, "n_head": 4,
    "vocab_size": 256, "n_positions": 128, "resid_pdrop": 0.0, "attn_pdrop": 0.0, "embd_pdrop": 0.0})");
  CHECK_FALSE(off.model.dropout);
}

TEST_CASE("DeepSeek-V3 maps its latent attention, dense first layers and shared expert") {
  // deepseek-ai/DeepSeek-V3 config.json (the fields twocs reads).
  const std::string v3 = R"({"model_type": "deepseek_v3", "num_hidden_layers": 61, "hidden_size": 7168,
    "num_attention_heads": 128, "num_key_value_heads": 128, "intermediate_size": 18432,
    "moe_intermediate_size": 2048, "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8,
    "first_k_dense_replace": 3, "moe_layer_freq": 1, "q_lora_rank": 1536, "kv_lora_rank": 512,
    "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 129280,
    "max_position_embeddings": 163840, "num_nextn_predict_layers": 1, "tie_word_embeddings": false,
    "attention_dropout": 0.0})";
  const auto w = import(v3);
  REQUIRE(w.model.mla.has_value());
  CHECK(w.model.mla->q_lora_rank == 1536);
  CHECK(w.model.mla->kv_lora_rank == 512);
  CHECK(w.model.mla->qk_nope_head_dim == 128);
  CHECK(w.model.mla->qk_rope_head_dim == 64);
  CHECK(w.model.mla->v_head_dim == 128);
  REQUIRE(w.model.moe.has_value());
  CHECK(w.model.moe->experts == 256);
  CHECK(w.model.moe->shared_experts == 1);
  CHECK(w.model.moe->dense_layers == 3);
  CHECK(w.model.moe->expert_ffn_hidden == 2048);
  CHECK(w.model.ffn_hidden == 18432); // the dense layers' FFN
  CHECK_FALSE(w.model.dropout);
  CHECK(w.model.mtp_layers == 1); // num_nextn_predict_layers
}

TEST_CASE("GLM-4.5 keeps grouped-query attention with DeepSeek's MoE fields, Kimi K2 maps as DeepSeek-V3") {
  // zai-org/GLM-4.5 config.json (the fields twocs reads).
  const auto glm = import(R"({"model_type": "glm4_moe", "num_hidden_layers": 92, "hidden_size": 5120,
    "num_attention_heads": 96, "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 12288,
    "moe_intermediate_size": 1536, "n_routed_experts": 160, "n_shared_experts": 1, "num_experts_per_tok": 8,
    "first_k_dense_replace": 3, "num_nextn_predict_layers": 1, "vocab_size": 151552,
    "max_position_embeddings": 131072, "tie_word_embeddings": false, "attention_dropout": 0.0})");
  CHECK(glm.model.kv_heads == 8);
  CHECK(glm.model.head_dim() == 128); // 96 heads of 128 against h 5120
  CHECK_FALSE(glm.model.mla.has_value());
  REQUIRE(glm.model.moe.has_value());
  CHECK(glm.model.moe->experts == 160);
  CHECK(glm.model.moe->shared_experts == 1);
  CHECK(glm.model.moe->dense_layers == 3);
  CHECK(glm.model.mtp_layers == 1);
  // moonshotai/Kimi-K2-Instruct: DeepSeek-V3's architecture with 384 experts, 64 heads, one dense layer.
  const auto kimi = import(R"({"model_type": "kimi_k2", "num_hidden_layers": 61, "hidden_size": 7168,
    "num_attention_heads": 64, "num_key_value_heads": 64, "intermediate_size": 18432,
    "moe_intermediate_size": 2048, "n_routed_experts": 384, "n_shared_experts": 1, "num_experts_per_tok": 8,
    "first_k_dense_replace": 1, "moe_layer_freq": 1, "q_lora_rank": 1536, "kv_lora_rank": 512,
    "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 163840,
    "max_position_embeddings": 131072, "num_nextn_predict_layers": 0, "tie_word_embeddings": false})");
  REQUIRE(kimi.model.mla.has_value());
  CHECK(kimi.model.moe->experts == 384);
  CHECK(kimi.model.moe->dense_layers == 1);
  CHECK(kimi.model.mtp_layers == 0);
}

TEST_CASE("what cannot be mapped is named: MoE every other layer, unknown types, missing fields") {
  const auto import_error = [](const std::string& json) {
    return test::input_error_of([&] { (void)config::import_hf_config(json, "config.json"); });
  };
  const auto every_other = import_error(R"({"model_type": "deepseek_v3", "num_hidden_layers": 4, "hidden_size": 64,
      "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 256, "max_position_embeddings": 128,
      "moe_layer_freq": 2})");
  CHECK(std::string(every_other.problem()).find("'moe_layer_freq'") != std::string::npos);
  const auto no_latent = import_error(R"({"model_type": "deepseek_v3", "num_hidden_layers": 4, "hidden_size": 64,
      "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 256, "max_position_embeddings": 128,
      "n_routed_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 32})");
  CHECK(std::string(no_latent.problem()) == "field 'kv_lora_rank' is missing");
  CHECK_THROWS_AS((void)config::import_hf_config(R"({"model_type": "t5"})", "config.json"), InputError);
  try {
    (void)config::import_hf_config(R"({"model_type": "llama", "hidden_size": 4096})", "config.json");
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.problem()) == "field 'num_hidden_layers' is missing");
    REQUIRE(e.location().has_value());
    CHECK(e.location()->line == 1); // a missing field points at the object
    CHECK(e.location()->column == 1);
  }
  CHECK_THROWS_AS((void)config::import_hf_config("not json", "config.json"), InputError);
}

TEST_CASE("a multimodal Gemma 3 config is read through its text_config, with Gemma3TextConfig's defaults") {
  // google/gemma-3-27b-it's layout: the language model in text_config, which leaves vocab_size and
  // max_position_embeddings to Gemma3TextConfig (262,208 and 131,072).
  const std::string json = R"({
  "architectures": ["Gemma3ForConditionalGeneration"],
  "model_type": "gemma3",
  "text_config": {
    "head_dim": 128,
    "hidden_size": 5376,
    "intermediate_size": 21504,
    "model_type": "gemma3_text",
    "num_attention_heads": 32,
    "num_hidden_layers": 62,
    "num_key_value_heads": 16,
    "sliding_window": 1024
  },
  "vision_config": {"hidden_size": 1152, "model_type": "siglip_vision_model", "num_hidden_layers": 27}
})";
  const auto w = import(json);
  CHECK(w.model.layers == 62);
  CHECK(w.model.hidden == 5376);
  CHECK(w.model.vocab == 262208);
  CHECK(w.model.seq_len == 131072);
  CHECK(w.model.full_attention_every == 6);
  CHECK(w.model.sliding_window == 1024);
  CHECK(w.model.qk_norm);
  CHECK(w.model.post_norms);
  const std::string text = config::import_hf_config(json, "config.json");
  CHECK(text.find("model_type gemma3)") != std::string::npos);
  CHECK(text.find("vision tower is not modelled") != std::string::npos);
}

TEST_CASE("a text_config's errors point inside it and a missing text model type is inferred or refused") {
  const auto import_error = [](const std::string& json) {
    return test::input_error_of([&] { (void)config::import_hf_config(json, "config.json"); });
  };
  const auto odd = import_error(R"({"model_type": "gemma3",
  "text_config": {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
    "num_key_value_heads": 3, "intermediate_size": 128, "sliding_window": 16}})");
  CHECK(std::string(odd.problem()).find("'num_key_value_heads' (3) must divide") != std::string::npos);
  REQUIRE(odd.location().has_value());
  CHECK(odd.location()->line == 3); // at the value inside text_config
  CHECK(odd.location()->column == 28);
  // Mistral3Config's text model is a Mistral; a missing field inside it is located at text_config's '{'.
  const auto mistral = import_error(R"({"model_type": "mistral3", "text_config": {"hidden_size": 64}})");
  CHECK(std::string(mistral.problem()) == "field 'num_hidden_layers' is missing");
  CHECK(mistral.location()->column == 43);
  const auto unnamed = import_error(R"({"model_type": "llava", "text_config": {"hidden_size": 64}})");
  CHECK(std::string(unnamed.problem()).find("names no model_type") != std::string::npos);
  const auto scalar = import_error(R"({"model_type": "gemma3", "text_config": 7})");
  CHECK(std::string(scalar.problem()) == "field 'text_config' must be an object, got 7");
}
