#include "study_yaml_text.hpp"

namespace twocs::config::detail {
namespace {

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + '"';
}

} // namespace

std::string flow_yaml(const YamlNode& node) {
  switch (node.kind) {
  case YamlNode::Kind::null: return "null";
  case YamlNode::Kind::scalar: return node.is_string ? quoted(node.scalar) : node.scalar;
  case YamlNode::Kind::sequence: {
    std::string out = "[";
    for (std::size_t i = 0; i < node.items.size(); ++i) out += (i ? ", " : "") + flow_yaml(node.items[i]);
    return out + "]";
  }
  case YamlNode::Kind::mapping: {
    std::string out = "{";
    for (std::size_t i = 0; i < node.entries.size(); ++i)
      out += (i ? ", " : "") + node.entries[i].key + ": " + flow_yaml(node.entries[i].value);
    return out + "}";
  }
  }
  return "null";
}

} // namespace twocs::config::detail
