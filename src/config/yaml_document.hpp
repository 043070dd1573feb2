// A YAML document as the scenario readers see it: plain data (null, scalar, list, mapping)
// where every node and every mapping key remembers where it came from, a line and column of
// a file or a column of a --set argument. yaml-cpp does the parsing; this tree adds what it
// does not: duplicate-key detection, quoted-versus-plain scalars, bounded depth and size, and
// locations that survive --set overrides replacing parts of the tree.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <twocs/error.hpp>

namespace twocs::config::detail {

struct YamlEntry;

struct YamlNode {
  enum class Kind { null, scalar, sequence, mapping };

  Kind kind = Kind::null;
  std::string scalar;             // the text of a scalar, without quotes
  bool is_string = false;         // quoted or block scalar: always a string, never a number or bool
  bool quoted = false;            // the scalar's text starts with a quote character
  SourceLocation where;           // the value's first character
  std::vector<YamlNode> items;    // a sequence's elements
  std::vector<YamlEntry> entries; // a mapping's keys and values, in order

  [[nodiscard]] const YamlEntry* find(std::string_view key) const;
  [[nodiscard]] YamlEntry* find(std::string_view key);
};

struct YamlEntry {
  std::string key;
  SourceLocation key_where; // the key's first character
  YamlNode value;
};

/// The entries along the dotted `key_path` below `root`, one per segment from the first, up to
/// the first segment that is not there: all of them when the whole path is set.
[[nodiscard]] std::vector<const YamlEntry*> entries_along(const YamlNode& root, std::string_view key_path);

/// "a mapping", "a list", "no value", "the number 12.5", "the string 'abc'": for messages.
[[nodiscard]] std::string describe(const YamlNode& node);

/// Turns yaml-cpp marks (0-based line, column and offset) into locations of the input.
struct MarkTranslation {
  std::string source;            // a file name, or "--set KEY=VALUE"
  bool single_line = false;      // true for a --set value: columns count from `column_offset`
  std::size_t column_offset = 0; // characters of the --set argument before the value
};

/// Parses one YAML document. Syntax errors, an empty text, several documents, duplicate or
/// non-scalar keys and runaway nesting (recursive aliases) are InputErrors located in `text`.
/// An empty text gives a null node (callers decide whether that is an error).
[[nodiscard]] YamlNode parse_yaml(std::string_view text, const MarkTranslation& marks);

/// Parses a whole input file: additionally, an empty file or a top level that is not a
/// mapping is an InputError. `top_level_keys` names what the file should hold, for the fix
/// ("'model:' and 'training:'").
[[nodiscard]] YamlNode parse_yaml_file(std::string_view text, const std::string& name, std::string_view top_level_keys);

} // namespace twocs::config::detail
