#include "yaml_document.hpp"

#include "text_check.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <sstream>
#include <unordered_map>

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

namespace twocs::config::detail {
namespace {

/// Scenario files nest four levels deep; anything far deeper is a mistake or a recursive alias
/// (`a: &x [*x]`), which yaml-cpp turns into a cyclic graph.
constexpr int max_depth = 64;
/// Scenario files hold hundreds of values (a platform with a measured kernel table a few
/// thousand). More is a mistake, or aliases multiplying a small text into a huge tree
/// ("billion laughs"): stop long before time and memory run out (100,000 values take about
/// 0.1 s and 40 MiB).
constexpr std::size_t max_nodes = 100'000;
/// A scenario file is a few kilobytes; yaml-cpp needs seconds for megabytes.
constexpr std::size_t max_text_bytes = 1u << 20;
/// Names and values are short; a longer scalar is a pasted file or a missing quote.
constexpr std::size_t max_scalar_bytes = 64u << 10;

/// Thrown by the pre-pass when the document has more than max_nodes values.
struct TooManyNodes {
  YAML::Mark mark;
};

class Converter {
public:
  Converter(std::string_view text, const MarkTranslation& marks) : text_(text), marks_(marks) {}

  SourceLocation locate(const YAML::Mark& mark, const SourceLocation& fallback) const {
    if (mark.is_null() || mark.pos < 0) return fallback;
    if (marks_.single_line) return {marks_.source, 1, static_cast<int>(marks_.column_offset) + mark.pos + 1};
    return {marks_.source, mark.line + 1, mark.column + 1};
  }

  YamlNode convert(const YAML::Node& node, const SourceLocation& fallback, int depth) {
    YamlNode out;
    out.where = locate(node.Mark(), fallback);
    if (depth > max_depth)
      throw located(out.where, fmt::format("the YAML nesting is deeper than {} levels", max_depth),
                    "scenario files nest a few levels deep; look for a recursive alias such as '&x [*x]'");
    if (++nodes_ > max_nodes)
      throw located(out.where, fmt::format("the YAML document expands to more than {} values", max_nodes),
                    "remove the aliases that multiply the document");
    switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null: out.kind = YamlNode::Kind::null; break;
    case YAML::NodeType::Scalar: convert_scalar(node, out); break;
    case YAML::NodeType::Sequence:
      out.kind = YamlNode::Kind::sequence;
      for (const auto& item : node) out.items.push_back(convert(item, out.where, depth + 1));
      break;
    case YAML::NodeType::Map: convert_mapping(node, out, depth); break;
    }
    return out;
  }

  static InputError located(const SourceLocation& where, std::string problem, std::string fix) {
    InputError error(std::move(problem), {}, std::move(fix));
    error.set_location(where);
    return error;
  }

private:
  void convert_scalar(const YAML::Node& node, YamlNode& out) const {
    out.kind = YamlNode::Kind::scalar;
    if (node.Scalar().size() > max_scalar_bytes)
      throw located(out.where,
                    fmt::format("a value is {} characters long, more than {}", node.Scalar().size(), max_scalar_bytes),
                    "values are names and numbers; look for a missing closing quote");
    out.scalar = node.Scalar();
    out.is_string = node.Tag() == "!";
    const auto pos = node.Mark().pos;
    out.quoted = pos >= 0 && static_cast<std::size_t>(pos) < text_.size() &&
                 (text_[static_cast<std::size_t>(pos)] == '"' || text_[static_cast<std::size_t>(pos)] == '\'');
  }

  void convert_mapping(const YAML::Node& node, YamlNode& out, int depth) {
    out.kind = YamlNode::Kind::mapping;
    std::unordered_map<std::string, int> first_lines; // keeps duplicate detection linear in huge mappings
    for (auto it = node.begin(); it != node.end(); ++it) {
      YamlEntry entry;
      entry.key_where = locate(it->first.Mark(), out.where);
      if (!it->first.IsScalar())
        throw located(entry.key_where, "a mapping key must be a plain name, not a list or a mapping",
                      "write keys as words, e.g. 'layers: 96'");
      entry.key = it->first.Scalar();
      if (auto [first, inserted] = first_lines.try_emplace(entry.key, entry.key_where.line); !inserted)
        throw located(entry.key_where,
                      fmt::format("duplicate key '{}' (first given at line {})", entry.key, first->second),
                      "give each key once; remove one of the two");
      entry.value = convert(it->second, entry.key_where, depth + 1);
      out.entries.push_back(std::move(entry));
    }
  }

  std::string_view text_;
  const MarkTranslation& marks_;
  std::size_t nodes_ = 0;
};

/// Records where the first node of each document starts. Needed because yaml-cpp 0.7's
/// LoadAll loops forever, allocating, on a stray flow indicator such as a leading ','
/// (jbeder/yaml-cpp#1040, fixed upstream by #1319): the parser reports a null document
/// without consuming the token, again and again. Counting documents with a bounded loop and
/// comparing where they start tells a second document from a stuck parser.
class DocumentStarts final : public YAML::EventHandler {
public:
  std::vector<YAML::Mark> first_nodes;

  void OnDocumentStart(const YAML::Mark&) override { pending_ = true; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { node(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { node(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string&) override { node(mark); }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    node(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    node(mark);
  }
  void OnMapEnd() override {}

private:
  void node(const YAML::Mark& mark) {
    if (++nodes_ > max_nodes) throw TooManyNodes{mark};
    if (pending_) first_nodes.push_back(mark);
    pending_ = false;
  }
  bool pending_ = false;
  std::size_t nodes_ = 0;
};

/// Throws for a text yaml-cpp cannot parse safely: a stuck parser or more than one document.
void check_single_document(const std::string& text, const Converter& converter, const SourceLocation& start) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentStarts starts;
  int documents = 0;
  try {
    while (documents < 2 && parser.HandleNextDocument(starts)) ++documents;
  } catch (const TooManyNodes& e) {
    throw Converter::located(converter.locate(e.mark, start),
                             fmt::format("the YAML text holds more than {} values", max_nodes),
                             "a scenario file holds a few hundred values; check that this is the intended file");
  }
  if (documents < 2 || starts.first_nodes.size() < 2) return;
  const YAML::Mark& second = starts.first_nodes[1];
  if (second.pos == starts.first_nodes[0].pos) {
    const auto pos = static_cast<std::size_t>(std::max(second.pos, 0));
    throw Converter::located(converter.locate(second, start),
                             fmt::format("YAML syntax error: unexpected '{}'", pos < text.size() ? text[pos] : ' '),
                             "',', ']' and '}' belong inside [lists] or {mappings}; check the brackets");
  }
  throw Converter::located(converter.locate(second, start), "more than one YAML document (a second '---')",
                           "keep one document per input");
}

/// Throws for a text that is too large or not YAML text at all (binary, another encoding).
void check_text(std::string_view text, const MarkTranslation& marks, const SourceLocation& start) {
  if (text.size() > max_text_bytes)
    throw Converter::located(
        start, fmt::format("the YAML text is {} bytes, more than {} MiB", text.size(), max_text_bytes >> 20),
        "a scenario file is a few kilobytes of YAML; check that this is the intended file");
  if (const auto bad = find_bad_byte(text)) {
    SourceLocation where = start;
    if (marks.single_line)
      where.column += static_cast<int>(bad->offset);
    else
      where = {marks.source, bad->line, bad->column};
    throw Converter::located(where, describe_bad_byte(*bad),
                             "YAML files are UTF-8 text; check that this is the intended file, or re-save it as UTF-8");
  }
}

} // namespace

const YamlEntry* YamlNode::find(std::string_view key) const {
  auto it = std::find_if(entries.begin(), entries.end(), [&](const YamlEntry& e) { return e.key == key; });
  return it == entries.end() ? nullptr : &*it;
}

YamlEntry* YamlNode::find(std::string_view key) {
  auto it = std::find_if(entries.begin(), entries.end(), [&](const YamlEntry& e) { return e.key == key; });
  return it == entries.end() ? nullptr : &*it;
}

std::vector<const YamlEntry*> entries_along(const YamlNode& root, std::string_view key_path) {
  std::vector<const YamlEntry*> entries;
  const YamlNode* node = &root;
  std::size_t start = 0;
  while (start <= key_path.size() && !key_path.empty()) {
    const std::size_t dot = std::min(key_path.find('.', start), key_path.size());
    const YamlEntry* entry =
        node->kind == YamlNode::Kind::mapping ? node->find(key_path.substr(start, dot - start)) : nullptr;
    if (!entry) break;
    entries.push_back(entry);
    node = &entry->value;
    start = dot + 1;
  }
  return entries;
}

std::string describe(const YamlNode& node) {
  switch (node.kind) {
  case YamlNode::Kind::null: return "no value";
  case YamlNode::Kind::sequence: return "a list";
  case YamlNode::Kind::mapping: return "a mapping";
  case YamlNode::Kind::scalar: break;
  }
  if (node.is_string) return fmt::format("the string '{}'", node.scalar);
  if (node.scalar == "true" || node.scalar == "false") return node.scalar;
  double number = 0;
  const char* end = node.scalar.data() + node.scalar.size();
  auto [ptr, ec] = std::from_chars(node.scalar.data(), end, number);
  if (ec == std::errc() && ptr == end) return fmt::format("the number {}", node.scalar);
  return fmt::format("'{}'", node.scalar);
}

YamlNode parse_yaml(std::string_view text, const MarkTranslation& marks) {
  Converter converter(text, marks);
  const SourceLocation start{marks.source, 1, static_cast<int>(marks.column_offset) + 1};
  const std::string owned(text);
  check_text(text, marks, start);
  YAML::Node document;
  try {
    check_single_document(owned, converter, start);
    document = YAML::Load(owned);
  } catch (const YAML::DeepRecursion& e) {
    throw Converter::located(converter.locate(e.mark, start), "the YAML nesting is too deep",
                             "scenario files nest a few levels deep; check the brackets");
  } catch (const YAML::Exception& e) {
    throw Converter::located(converter.locate(e.mark, start),
                             fmt::format("YAML syntax error: {}", e.msg.empty() ? "malformed YAML" : e.msg),
                             "check the indentation (spaces, not tabs), colons, quotes and brackets here "
                             "and on the line before");
  }
  return converter.convert(document, start, 0);
}

YamlNode parse_yaml_file(std::string_view text, const std::string& name, std::string_view top_level_keys) {
  YamlNode root = parse_yaml(text, MarkTranslation{name, false, 0});
  if (root.kind == YamlNode::Kind::null)
    throw Converter::located(
        {name, 1, 1}, "the file is empty (no YAML content)",
        fmt::format("write the keys of the file format: {} (docs/input-formats.md)", top_level_keys));
  if (root.kind != YamlNode::Kind::mapping)
    throw Converter::located(root.where, fmt::format("the top level must be a mapping of keys, not {}", describe(root)),
                             "start the file with 'key: value' lines");
  return root;
}

} // namespace twocs::config::detail
