// --set KEY=VALUE overrides: KEY is a dotted path into the workload (`model.*`, `training.*`)
// or the platform (`name`, `device.*`, `node.*`, `cluster.*`), VALUE is YAML. An override
// replaces or creates the node at its path before the strict checks, and everything it
// brings carries locations inside the --set argument, so its errors point at it.
#pragma once

#include <string>
#include <vector>

#include "yaml_document.hpp"

namespace twocs::config::detail {

enum class InputKind { workload, platform };

struct Override {
  std::string argument;             // "KEY=VALUE" as given
  std::vector<std::string> path;    // KEY split at its dots
  std::vector<int> segment_columns; // 1-based column of each path segment in `argument`
  InputKind target = InputKind::workload;
  YamlNode value; // located inside `argument`

  [[nodiscard]] SourceLocation at(int column) const { return {"--set " + argument, 1, column}; }
};

/// Parses every argument; a missing '=', an empty key or path segment, a key outside both
/// files, or a VALUE that is not valid YAML is an InputError located in the argument.
[[nodiscard]] std::vector<Override> parse_overrides(const std::vector<std::string>& arguments);

/// Applies, in order, the overrides aimed at `target` to `root` (a mapping), creating
/// intermediate mappings. Setting a key below a scalar or list is an InputError.
void apply_overrides(YamlNode& root, const std::vector<Override>& overrides, InputKind target);

} // namespace twocs::config::detail
