// Hugging Face config.json -> twocs workload: the file's parsing and error locations, and the
// workload it writes; each model_type's mapping is in hf_models.cpp. A multimodal config
// (Gemma3Config, Mistral3Config) is read through its text_config.
#include <twocs/config/hf_import.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <twocs/error.hpp>

#include "hf_reader.hpp"
#include "text_check.hpp"

namespace twocs::config {
namespace {

using detail::HfModel;
using detail::HfReader;
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

/// Byte offset of the value of `key` in the object that starts at or after byte `from` of `text`
/// (valid JSON), or of that object's '{' when the key is absent: where a message about that
/// field points.
std::size_t field_offset(const std::string& text, std::string_view key, std::size_t from = 0) {
  int depth = 0;
  std::size_t object = from;
  for (std::size_t i = from; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '{' || c == '[') {
      if (depth++ == 0) object = i;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) break; // the end of the object
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

} // namespace

void detail::HfReader::fail(std::string_view key, const std::string& problem, const std::string& fix) const {
  InputError error(problem, std::string(key), fix);
  error.set_location(location_at(text, field_offset(text, key, object), source));
  throw error;
}

namespace {

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

/// The model_type of `r`'s object; a missing or non-string one is refused at its place.
std::string model_type_of(const HfReader& r) {
  const auto type = r.j.find("model_type");
  if (type == r.j.end() || !type->is_string())
    r.fail("model_type",
           type == r.j.end() ? "field 'model_type' is missing"
                             : fmt::format("field 'model_type' must be a string, got {}", type->dump()),
           "give a Hugging Face config.json (it names its model_type, e.g. \"llama\")");
  return type->get<std::string>();
}

/// The language model of a multimodal config (Gemma 3, Mistral 3: Gemma3ForConditionalGeneration,
/// Mistral3ForConditionalGeneration) is its `text_config`; the vision tower is not modelled.
/// The text model's type: its own model_type, else what the multimodal class gives it.
std::string text_model_type(const HfReader& text, const std::string& outer) {
  if (text.j.contains("model_type")) return model_type_of(text);
  if (outer == "gemma3") return "gemma3_text"; // Gemma3Config's default text_config
  if (outer == "mistral3") return "mistral";   // Mistral3Config's default text_config
  text.fail("model_type", fmt::format("field 'text_config' of a '{}' config names no model_type", outer),
            "add the language model's model_type to text_config (e.g. \"gemma3_text\")");
}

} // namespace

std::string import_hf_config(const std::string& json_text, const std::string& source) {
  const json j = parse_config(json_text, source);
  const HfReader outer{j, json_text, source};
  const std::string outer_type = model_type_of(outer);
  const auto text = j.find("text_config");
  if (text != j.end() && !text->is_object())
    outer.fail("text_config", fmt::format("field 'text_config' must be an object, got {}", text->dump()),
               "give the multimodal config.json as published with the weights");
  const bool multimodal = text != j.end();
  const HfReader r = multimodal ? HfReader{*text, json_text, source, field_offset(json_text, "text_config")} : outer;
  const std::string type = multimodal ? text_model_type(r, outer_type) : outer_type;
  const std::string note = multimodal ? fmt::format("# The language model of a multimodal config (text_config, "
                                                    "model_type {}); its vision tower is not modelled.\n",
                                                    type)
                                      : std::string();
  HfModel m = detail::read_hf_model(r, type);
  detail::read_hf_sliding_window(r, type, m);
  m.dropout = r.any_dropout(type == "gpt2");
  std::string out =
      fmt::format("# Imported from {} (Hugging Face config.json, model_type {}) by twocs import hf.\n"
                  "# The training plan is a one-device placeholder: set it to the run you model.\n{}{}"
                  "model:\n  layers: {}\n  hidden: {}\n  heads: {}\n  kv_heads: {}\n  ffn_hidden: {}\n"
                  "  ffn_kind: {}\n  vocab: {}\n  seq_len: {}\n  norm: {}\n  position: {}\n"
                  "  attention_mask: causal\n  tied_embeddings: {}\n  dropout: {}\n",
                  source, outer_type, note, m.note, m.layers, m.hidden, m.heads, m.kv_heads, m.ffn, m.ffn_kind, m.vocab,
                  m.seq, m.norm, m.position, m.tied ? "true" : "false", m.dropout ? "true" : "false");
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
