#include "study_reader.hpp"

#include <array>
#include <string_view>

#include <fmt/format.h>

#include "study_yaml_text.hpp"
#include "yaml_reader.hpp"

namespace twocs::config::detail {
namespace {

constexpr std::array<std::string_view, 5> study_keys = {"study", "description", "base", "axes", "figures"};
constexpr std::array<std::string_view, 3> base_keys = {"workload", "platform", "set"};
constexpr std::array<std::string_view, 2> axis_keys = {"key", "values"};
constexpr std::array<std::string_view, 3> entry_keys = {"key", "values", "zip"};

constexpr std::string_view axis_example = "{key: cluster.network.bandwidth, values: [25GB/s, 50GB/s]}";

LocatedSet located_set(const std::string& key, const SourceLocation& key_where, const YamlNode& value) {
  return {key + "=" + flow_yaml(value), key.size(), key_where, value.where, std::nullopt};
}

std::string read_key(const Field& f) {
  std::string key = read_text(f);
  if (key.find('=') != std::string::npos || key.find(' ') != std::string::npos)
    fail_at(f.where(), f.path, fmt::format("{} '{}' is not a dotted key", f.path, key),
            "write a dotted key path such as training.parallelism.data");
  return key;
}

std::filesystem::path resolve(const Field& f, const std::filesystem::path& directory) {
  return study_path(directory, read_text(f));
}

void read_base(const Field& field, const std::filesystem::path& directory, ReadStudy& out) {
  const MappingReader base(field, base_keys);
  if (const auto f = base.optional("workload")) {
    out.study.workload = resolve(*f, directory);
    out.workload_where = f->where();
  }
  if (const auto f = base.optional("platform")) {
    out.study.platform = resolve(*f, directory);
    out.platform_where = f->where();
  }
  if (const auto f = base.optional("set")) {
    for (const auto& [key, value] : read_entries(*f)) {
      if (value.value->kind == YamlNode::Kind::null)
        fail_at(value.where(), value.path, fmt::format("{} has no value", value.path),
                fmt::format("write '{}: VALUE' or remove it", key));
      out.base.push_back(located_set(key, value.key_where, *value.value));
      out.study.base_overrides.push_back(out.base.back().argument);
    }
  }
}

/// A file axis's value: a path, kept as written for the CSV and resolved for the run.
void read_file_value(const Field& item, const std::string& key, const SourceLocation& key_where,
                     const std::filesystem::path& directory, StudyAxis& axis, std::vector<LocatedSet>& located) {
  if (item.value->kind != YamlNode::Kind::scalar)
    fail_at(item.where(), item.path, fmt::format("{} is not a file path", item.path),
            fmt::format("give the {} file's path relative to the study, e.g. ../../platforms/dgx-h100.yaml", key));
  const std::string text = read_text(item);
  LocatedSet set{key + "=" + text, key.size(), key_where, item.where(), resolve(item, directory)};
  located.push_back(std::move(set));
  axis.values.push_back(text);
}

/// One `{key, values}` mapping: its axis and the --set of each value (a file for `workload` and
/// `platform`).
StudyAxis read_axis(const Field& field, const std::filesystem::path& directory,
                    std::vector<std::vector<LocatedSet>>& sets) {
  const MappingReader a(field, axis_keys);
  const Field key_field = a.required("key", "cluster.network.bandwidth");
  StudyAxis axis{read_key(key_field), {}};
  const Field values = a.required("values", "[25GB/s, 50GB/s, 100GB/s]");
  const std::vector<Field> items = read_list(values);
  if (items.empty())
    fail_at(values.where(), values.path,
            fmt::format("{} is an empty list: axis '{}' has no values", values.path, axis.key),
            "give at least one value, e.g. values: [25GB/s, 50GB/s], or remove the axis");
  std::vector<LocatedSet>& located = sets.emplace_back();
  for (const Field& item : items) {
    if (item.value->kind == YamlNode::Kind::null)
      fail_at(item.where(), item.path, fmt::format("{} has no value", item.path), "give a value or remove it");
    if (Study::names_file(axis.key)) {
      read_file_value(item, axis.key, key_field.where(), directory, axis, located);
      continue;
    }
    located.push_back(located_set(axis.key, key_field.where(), *item.value));
    axis.values.push_back(flow_yaml(*item.value));
  }
  return axis;
}

StudyDimension read_zip(const Field& zip, const std::filesystem::path& directory,
                        std::vector<std::vector<LocatedSet>>& sets) {
  const std::vector<Field> items = read_list(zip);
  if (items.empty())
    fail_at(zip.where(), zip.path, fmt::format("{} is an empty list", zip.path),
            fmt::format("list the axes that advance together, e.g. zip: [{}, ...]", axis_example));
  StudyDimension dimension;
  for (const Field& item : items) {
    dimension.axes.push_back(read_axis(item, directory, sets));
    if (dimension.axes.back().values.size() != dimension.axes.front().values.size())
      fail_at(item.where(), item.path,
              fmt::format("zipped axis '{}' has {} values but '{}' has {}", dimension.axes.back().key,
                          dimension.axes.back().values.size(), dimension.axes.front().key,
                          dimension.axes.front().values.size()),
              "zipped axes advance together: give each the same number of values");
  }
  return dimension;
}

StudyDimension read_dimension(const Field& field, const std::filesystem::path& directory,
                              std::vector<std::vector<LocatedSet>>& sets) {
  const MappingReader entry(field, entry_keys);
  const auto zip = entry.optional("zip");
  if (zip && (entry.optional("key") || entry.optional("values")))
    fail_at(field.where(), field.path, fmt::format("{} has both 'zip' and 'key'/'values'", field.path),
            "an axis is either {key: ..., values: [...]} or {zip: [...]}; split it in two");
  if (zip) return read_zip(*zip, directory, sets);
  return StudyDimension{{read_axis(field, directory, sets)}};
}

void check_distinct_keys(const std::vector<Field>& entries, const Study& study) {
  std::vector<std::string> seen;
  std::size_t dimension = 0;
  for (const StudyDimension& d : study.dimensions) {
    for (const StudyAxis& axis : d.axes) {
      for (const std::string& key : seen)
        if (key == axis.key)
          fail_at(entries[dimension].where(), entries[dimension].path,
                  fmt::format("axis key '{}' appears twice in the axes", axis.key),
                  "give each key one axis; list all its values there, or zip it with the key it moves with");
      seen.push_back(axis.key);
    }
    ++dimension;
  }
}

void check_size(const Field& axes, const Study& study) {
  double count = 1;
  for (const StudyDimension& d : study.dimensions) count *= static_cast<double>(d.size());
  if (count > static_cast<double>(max_study_scenarios))
    fail_at(axes.where(), axes.path,
            fmt::format("the axes make {:.0f} scenarios, more than {}", count, max_study_scenarios),
            "split the study, or zip axes that move together instead of crossing them");
}

} // namespace

ReadStudy read_study(const YamlNode& root, const std::string& default_name, const std::filesystem::path& directory) {
  const MappingReader top(root, study_keys, "the study");
  ReadStudy out;
  const auto name = top.optional("study");
  out.study.name = name ? read_text(*name) : default_name;
  if (const auto d = top.optional("description")) (void)read_text(*d);
  if (const auto base = top.optional("base")) read_base(*base, directory, out);
  const Field axes = top.required("axes", fmt::format("[{}]", axis_example));
  const std::vector<Field> entries = read_list(axes);
  if (entries.empty())
    fail_at(axes.where(), axes.path, "axes is an empty list: the study has no scenarios to vary",
            fmt::format("add an axis, e.g. - {}", axis_example));
  out.study.directory = directory;
  for (const Field& entry : entries) out.study.dimensions.push_back(read_dimension(entry, directory, out.axis_sets));
  check_distinct_keys(entries, out.study);
  check_size(axes, out.study);
  if (const auto figures = top.optional("figures")) out.study.figures = read_figures(*figures, out.study.axis_keys());
  return out;
}

} // namespace twocs::config::detail
