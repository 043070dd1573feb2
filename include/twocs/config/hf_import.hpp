// Reads a Hugging Face model config (config.json) into a twocs workload file (`twocs import hf`).
#pragma once

#include <string>

namespace twocs::config {

/// The workload YAML of the model in `json_text` (a config.json named `source` in messages),
/// with a one-device training plan to edit. Supported `model_type`s: llama, mistral, mixtral,
/// qwen2, qwen3, qwen3_moe, gpt2, gpt_neox. Throws InputError naming the field it cannot map
/// (e.g. DeepSeek-V3's kv_lora_rank: multi-head latent attention).
[[nodiscard]] std::string import_hf_config(const std::string& json_text, const std::string& source);

} // namespace twocs::config
