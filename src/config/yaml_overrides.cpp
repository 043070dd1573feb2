#include "yaml_overrides.hpp"

#include <array>
#include <string_view>

#include <fmt/format.h>

#include "yaml_suggest.hpp"

namespace twocs::config::detail {
namespace {

constexpr std::array<std::string_view, 2> workload_roots = {"model", "training"};
constexpr std::array<std::string_view, 5> platform_roots = {"name", "device", "node", "cluster", "whatif"};
constexpr std::array<std::string_view, 7> all_roots = {"model", "training", "name",  "device",
                                                       "node",  "cluster",  "whatif"};

constexpr std::string_view override_example = "write KEY=VALUE, e.g. --set training.parallelism.data=4";

[[noreturn]] void fail(SourceLocation where, std::string problem, std::string fix) {
  InputError error(std::move(problem), {}, std::move(fix));
  error.set_location(std::move(where));
  throw error;
}

bool is_one_of(std::string_view name, std::span<const std::string_view> names) {
  for (std::string_view n : names)
    if (n == name) return true;
  return false;
}

/// Splits KEY at its dots, remembering where each segment starts in the argument.
void split_key(Override& o, std::string_view key) {
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = key.find('.', start);
    const std::size_t end = dot == std::string_view::npos ? key.size() : dot;
    const int column = static_cast<int>(start) + 1;
    if (end == start)
      fail(o.at(column), fmt::format("--set key '{}' has an empty part", key),
           "separate the keys of the path by single dots, e.g. training.parallelism.data");
    o.path.emplace_back(key.substr(start, end - start));
    o.segment_columns.push_back(column);
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
}

Override parse_override(const std::string& argument) {
  Override o;
  o.argument = argument;
  const std::size_t equals = argument.find('=');
  if (equals == std::string::npos)
    fail(o.at(1), fmt::format("--set '{}' has no '=' between key and value", argument), std::string(override_example));
  if (equals == 0)
    fail(o.at(1), fmt::format("--set '{}' has no key before '='", argument), std::string(override_example));
  const std::string_view key = std::string_view(argument).substr(0, equals);
  split_key(o, key);
  const std::string& root = o.path.front();
  if (is_one_of(root, workload_roots))
    o.target = InputKind::workload;
  else if (is_one_of(root, platform_roots))
    o.target = InputKind::platform;
  else
    fail(o.at(1), fmt::format("--set key '{}' is in neither file: it must start with {}", key, join_names(all_roots)),
         closest_name(root, all_roots) ? suggest(root, all_roots)
                                       : "model.* and training.* set the workload; name, device.*, node.* and "
                                         "cluster.* the platform");
  const std::string_view value = std::string_view(argument).substr(equals + 1);
  o.value = parse_yaml(value, MarkTranslation{"--set " + argument, true, equals + 1});
  return o;
}

void apply_override(YamlNode& root, const Override& o) {
  YamlNode* node = &root;
  for (std::size_t i = 0; i < o.path.size(); ++i) {
    const SourceLocation segment_where = o.at(o.segment_columns[i]);
    if (node->kind == YamlNode::Kind::null) node->kind = YamlNode::Kind::mapping; // "training:" left empty
    if (node->kind != YamlNode::Kind::mapping) {
      std::string parent;
      for (std::size_t j = 0; j < i; ++j) parent += (j ? "." : "") + o.path[j];
      fail(segment_where, fmt::format("cannot set '{}': '{}' is {}, not a mapping", o.path[i], parent, describe(*node)),
           fmt::format("set '{}' itself, or check the key path", parent));
    }
    YamlEntry* entry = node->find(o.path[i]);
    if (!entry) {
      YamlEntry created;
      created.key = o.path[i];
      created.key_where = segment_where;
      created.value.kind = YamlNode::Kind::mapping;
      created.value.where = segment_where;
      node->entries.push_back(std::move(created));
      entry = &node->entries.back();
    }
    if (i + 1 == o.path.size()) {
      entry->key_where = segment_where; // errors about the new value's mapping name the override
      entry->value = o.value;
    }
    node = &entry->value;
  }
}

} // namespace

std::vector<Override> parse_overrides(const std::vector<std::string>& arguments) {
  std::vector<Override> overrides;
  overrides.reserve(arguments.size());
  for (const std::string& argument : arguments) overrides.push_back(parse_override(argument));
  return overrides;
}

void apply_overrides(YamlNode& root, const std::vector<Override>& overrides, InputKind target) {
  for (const Override& o : overrides)
    if (o.target == target) apply_override(root, o);
}

} // namespace twocs::config::detail
