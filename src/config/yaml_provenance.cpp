#include "yaml_provenance.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <string>

#include <fmt/format.h>

#include "yaml_reader.hpp"
#include "yaml_suggest.hpp"

namespace twocs::config {
namespace {

// Every key of docs/input-formats.md's platform file that sets a rate, a size, a latency, an
// efficiency or a kernel shape (the quantities a simulated time is computed from).
constexpr std::array<std::string_view, 38> parameters = {
    "device.peak_flops",
    "device.memory",
    "device.memory_bandwidth",
    "device.comm_interference.compute_slowdown",
    "device.speed_variation.spread",
    "device.operator_model.gemm_efficiency",
    "device.operator_model.fp8_gemm_efficiency",
    "device.operator_model.memory_efficiency",
    "device.operator_model.kernel_overhead",
    "device.operator_model.compute_units",
    "device.operator_model.gemm_tiles",
    "device.operator_model.gemm_k_half",
    "device.operator_model.matrix_dtypes",
    "device.operator_model.vector_tiles",
    "device.operator_model.vector_gemm_efficiency",
    "device.operator_model.vector_flops",
    "device.operator_model.measured",
    "device.operator_model.measured_profiles",
    "device.operator_model.measured_device_scale",
    "device.operator_model.attention_kernel",
    "device.operator_model.fp8_gemm_layouts",
    "node.devices",
    "node.interconnect.bandwidth",
    "node.interconnect.latency",
    "node.interconnect.efficiency",
    "node.interconnect.in_network_efficiency",
    "node.interconnect.in_network_channels",
    "node.host_launch_time",
    "cluster.network.bandwidth",
    "cluster.network.latency",
    "cluster.network.efficiency",
    "cluster.network.oversubscription",
    "cluster.network.upper_oversubscription",
    "cluster.network.devices_per_nic",
    "cluster.network.hop_latency",
    "cluster.network.fabric_bandwidth",
    "cluster.network.in_network_efficiency",
    "cluster.network.nodes_per_switch",
};

constexpr std::array<std::string_view, 3> class_names = {"measurement", "derived", "assumption"};
constexpr std::array class_values = {ProvenanceClass::measurement, ProvenanceClass::derived,
                                     ProvenanceClass::assumption};
constexpr std::array<std::string_view, 4> statement_keys = {"class", "source", "rule", "sensitivity"};

} // namespace

std::span<const std::string_view> provenance_parameters() { return parameters; }

std::vector<std::string> PlatformProvenance::unstated() const {
  std::vector<std::string> names;
  for (const auto& p : parameters)
    if (p.kind == ProvenanceClass::unstated) names.push_back(p.parameter);
  return names;
}

std::string_view to_string(ProvenanceClass c) {
  switch (c) {
  case ProvenanceClass::measurement: return "measurement";
  case ProvenanceClass::derived: return "derived";
  case ProvenanceClass::assumption: return "assumption";
  case ProvenanceClass::command_line: return "--set";
  case ProvenanceClass::unstated: return "unstated";
  }
  return "?";
}

namespace detail {
namespace {

/// The value at a dotted path below `root`, or null when the file does not set it.
const YamlNode* find_path(const YamlNode& root, std::string_view path) {
  const auto entries = entries_along(root, path);
  const auto segments = static_cast<std::size_t>(std::count(path.begin(), path.end(), '.')) + 1;
  return entries.size() == segments ? &entries.back()->value : nullptr;
}

/// A value in YAML's flow style, on one line.
std::string flow_text(const YamlNode& v) {
  if (v.kind == YamlNode::Kind::scalar) return v.scalar;
  std::string text;
  for (const YamlNode& item : v.items) text += (text.empty() ? "" : ", ") + flow_text(item);
  for (const YamlEntry& e : v.entries) text += (text.empty() ? "" : ", ") + e.key + ": " + flow_text(e.value);
  return v.kind == YamlNode::Kind::sequence ? "[" + text + "]" : "{" + text + "}";
}

/// The value as written when it is short, else how many entries it has.
std::string value_text(const YamlNode& v) {
  constexpr std::size_t longest = 100;
  std::string text = flow_text(v);
  if (text.size() <= longest) return text;
  return fmt::format("{} entries", v.kind == YamlNode::Kind::sequence ? v.items.size() : v.entries.size());
}

ParameterProvenance read_statement(const Field& field, std::string parameter) {
  const MappingReader m(field, statement_keys);
  ParameterProvenance p;
  p.parameter = std::move(parameter);
  p.kind = read_enum(m.required("class", "measurement"), class_names, class_values);
  p.source = read_text(m.required("source", "\"NVIDIA H100 datasheet (2023)\""));
  const auto rule = m.optional("rule");
  const auto sensitivity = m.optional("sensitivity");
  if (p.kind == ProvenanceClass::derived && !rule)
    fail_at(field.where(), field.path, fmt::format("a derived {} must name its rule", p.parameter),
            "add rule: \"...\" (the rule applied to every device alike, and where it is documented)");
  if (p.kind != ProvenanceClass::derived && rule)
    fail_at(rule->key_where, rule->path, "only a derived parameter names a rule",
            "write class: derived, or move the rule into source");
  if (p.kind == ProvenanceClass::assumption && !sensitivity)
    fail_at(field.where(), field.path,
            fmt::format("an assumed {} must say how the validation moves with it", p.parameter),
            "add sensitivity: \"...\" (e.g. the validation's mean error at two other values)");
  if (rule) p.rule = read_text(*rule);
  if (sensitivity) p.sensitivity = read_text(*sensitivity);
  return p;
}

/// Whether --set replaced the value or a part of it.
bool from_command_line(const YamlNode& v) {
  if (v.where.file.starts_with("--set ")) return true;
  for (const YamlNode& item : v.items)
    if (from_command_line(item)) return true;
  for (const YamlEntry& e : v.entries)
    if (from_command_line(e.value)) return true;
  return false;
}

/// The statements the section makes, by parameter; each names a parameter the file sets.
std::map<std::string, ParameterProvenance, std::less<>> read_section(const YamlNode& root) {
  std::map<std::string, ParameterProvenance, std::less<>> stated;
  const YamlEntry* section = root.find("provenance");
  if (section == nullptr) return stated;
  const Field field{"provenance", &section->value, section->key_where};
  for (auto& [key, value] : read_entries(field)) {
    bool known = false;
    for (std::string_view p : parameters) known = known || p == key;
    if (!known)
      fail_at(value.key_where, value.path, fmt::format("'{}' is not a platform parameter that needs a statement", key),
              suggest(key, parameters));
    if (find_path(root, key) == nullptr)
      fail_at(value.key_where, value.path, fmt::format("a statement for {}, which this file does not set", key),
              fmt::format("set {} in the file, or remove this statement", key));
    stated.emplace(key, read_statement(value, key));
  }
  return stated;
}

} // namespace

void check_provenance(const YamlNode& root) { (void)read_section(root); }

PlatformProvenance read_provenance(const YamlNode& root) {
  auto stated = read_section(root);
  PlatformProvenance out;
  for (std::string_view parameter : parameters) {
    const YamlNode* value = find_path(root, parameter);
    if (value == nullptr) continue;
    const auto it = stated.find(parameter);
    ParameterProvenance p;
    if (from_command_line(*value))
      p = {std::string(parameter), {}, ProvenanceClass::command_line, "replaced on the command line", {}, {}};
    else if (it == stated.end())
      p = {std::string(parameter), {}, ProvenanceClass::unstated, {}, {}, {}};
    else
      p = std::move(it->second);
    p.value = value_text(*value);
    out.parameters.push_back(std::move(p));
  }
  return out;
}

} // namespace detail
} // namespace twocs::config
