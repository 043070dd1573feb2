#include "study_yaml_text.hpp"

#include <twocs/fileio/text_escape.hpp>

namespace twocs::config::detail {
namespace {

std::string quoted(std::string_view text) { return fileio::yaml_double_quoted(text); }

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
