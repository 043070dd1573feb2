#include <twocs/config/scenario_loader.hpp>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <iterator>
#include <system_error>

#include <fmt/format.h>

#include <twocs/embedded_scenario.hpp>
#include <twocs/error.hpp>
#include <twocs/hardware/attention_kernel.hpp>
#include <twocs/hardware/fp8_scaling.hpp>
#include <twocs/hardware/validate.hpp>
#include <twocs/model/validate.hpp>

#include "yaml_document.hpp"
#include "yaml_overrides.hpp"
#include "yaml_platform.hpp"
#include "yaml_reader.hpp"
#include "yaml_workload.hpp"

namespace twocs::config {
namespace {

using detail::InputKind;
using detail::Override;
using detail::YamlEntry;
using detail::YamlNode;

/// A scenario file is a few kilobytes; refuse to swallow a device or a huge file whole.
constexpr std::uintmax_t max_input_bytes = 16u << 20;

/// model.name or the platform's name when the file gives none: the file's stem, or "default"
/// for a text that is not a file ("<embedded ...>").
std::string default_name_for(const std::string& input_name) {
  if (input_name.empty() || input_name.front() == '<') return "default";
  std::string stem = std::filesystem::path(input_name).stem().string();
  return stem.empty() ? "default" : stem;
}

/// Where the dotted `key_path` is in `root`: a scalar or list value's first character, a
/// mapping's key; the nearest existing parent when the key was left to its default.
SourceLocation locate(const YamlNode& root, std::string_view key_path) {
  SourceLocation where = root.where;
  for (const YamlEntry* entry : detail::entries_along(root, key_path)) {
    const YamlNode& node = entry->value;
    const bool point_at_key = node.kind == YamlNode::Kind::mapping || node.kind == YamlNode::Kind::null;
    where = point_at_key ? entry->key_where : node.where;
  }
  return where;
}

/// Runs `check` (a validation of the model or hardware layer, which knows key paths but not
/// files) and gives its InputError the location of its key in `document`.
template <class Check> void located_check(const YamlNode& document, Check check) {
  try {
    check();
  } catch (InputError& error) {
    if (!error.location()) error.set_location(locate(document, error.key_path()));
    throw;
  }
}

/// A plan search chooses tensor, pipeline, data and virtual degrees itself: the stated ones are
/// replaced by the smallest valid plan (data = expert, which expert parallelism needs) so that the
/// rest of the plan is checked on its own and a sweep over models needs no degrees per model.
void use_placeholder_degrees(model::Parallelism& p) {
  p.tensor = 1;
  p.pipeline = 1;
  p.data = p.expert;
  p.virtual_stages = 1;
  p.stage_layers.clear();
}

struct LoadedWorkload {
  Workload workload;
  YamlNode document;
};

struct LoadedPlatform {
  hardware::ClusterSpec cluster;
  YamlNode document;
};

LoadedWorkload load_workload(const InputText& input, const std::vector<Override>& overrides) {
  YamlNode document = detail::parse_yaml_file(input.text, input.name, "'model:' and 'training:'");
  detail::apply_overrides(document, overrides, InputKind::workload);
  Workload workload = detail::read_workload(document, default_name_for(input.name));
  if (workload.search.objective != PlanObjective::none) use_placeholder_degrees(workload.plan.parallelism);
  located_check(document, [&] {
    model::validate(workload.model);
    model::validate(workload.model, workload.plan);
  });
  return {std::move(workload), std::move(document)};
}

LoadedPlatform load_platform(const InputText& input, const std::vector<Override>& overrides) {
  YamlNode document = detail::parse_yaml_file(input.text, input.name, "'device:', 'node:' and 'cluster:'");
  detail::apply_overrides(document, overrides, InputKind::platform);
  hardware::ClusterSpec cluster = detail::read_platform(document, default_name_for(input.name));
  located_check(document, [&] { hardware::validate(cluster); });
  return {std::move(cluster), std::move(document)};
}

/// Whether a key path from a validation belongs to the workload file (else the platform).
bool is_workload_key(std::string_view key_path) {
  const std::string_view root = key_path.substr(0, key_path.find('.'));
  return root == "training" || root == "model";
}

} // namespace

namespace detail {
struct ScenarioDocuments {
  YamlNode workload;
  YamlNode platform;
};
} // namespace detail

void locate_in_scenario(const Scenario& scenario, InputError& error) {
  // No key, or a flag's name ("--memory-budget"): nothing in the files to point at.
  if (error.location() || !scenario.documents || error.key_path().empty() || error.key_path().starts_with('-')) return;
  const detail::ScenarioDocuments& d = *scenario.documents;
  error.set_location(locate(is_workload_key(error.key_path()) ? d.workload : d.platform, error.key_path()));
}

Scenario load_scenario(const InputText& workload, const InputText& platform,
                       const std::vector<std::string>& overrides) {
  const std::vector<Override> parsed = detail::parse_overrides(overrides);
  LoadedWorkload w = load_workload(workload, parsed);
  LoadedPlatform p = load_platform(platform, parsed);
  try {
    hardware::validate_fit(p.cluster, w.workload.plan);
    hardware::keep_attention_kernel(
        p.cluster.device, hardware::chosen_attention_kernel(p.cluster.device, w.workload.plan.attention_kernel));
    hardware::keep_fp8_scaling(p.cluster.device, hardware::scaling_of(w.workload.plan.fp8_recipe));
  } catch (InputError& error) {
    if (!error.location())
      error.set_location(locate(is_workload_key(error.key_path()) ? w.document : p.document, error.key_path()));
    throw;
  }
  located_check(w.document,
                [&] { hardware::validate_collectives(p.cluster, w.workload.collectives, "training.collectives"); });
  for (const auto& [kind, algorithm] : w.workload.collectives) p.cluster.network.collectives[kind] = algorithm;
  // The host's launch time is the platform's unless the workload names its own (CUDA graphs: 0).
  if (!w.workload.plan.host.launch_time) w.workload.plan.host.launch_time = p.cluster.node.host_launch_time;
  auto documents = std::make_shared<detail::ScenarioDocuments>(
      detail::ScenarioDocuments{std::move(w.document), std::move(p.document)});
  return {std::move(w.workload), std::move(p.cluster), {}, std::move(documents)};
}

std::optional<std::filesystem::path> platform_named_by(const InputText& workload) {
  const YamlNode document = detail::parse_yaml_file(workload.text, workload.name, "'model:' and 'training:'");
  const YamlEntry* entry = document.find("platform");
  if (!entry) return std::nullopt;
  const YamlNode& value = entry->value;
  if (value.kind != YamlNode::Kind::scalar || value.scalar.empty()) {
    InputError error(fmt::format("platform: expected the path of a platform file, got {}", detail::describe(value)),
                     "platform", "write e.g. 'platform: ../platforms/dgx-h100.yaml' (relative to the workload file)");
    error.set_location(value.kind == YamlNode::Kind::null ? entry->key_where : value.where);
    throw error;
  }
  const std::filesystem::path path = detail::beside(workload.name, value.scalar);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    InputError error(fmt::format("platform: '{}' (resolved to '{}') is not a file", value.scalar, path.string()),
                     "platform",
                     "give the platform file's path relative to the workload file, or pass --platform FILE");
    error.set_location(value.where);
    throw error;
  }
  return path;
}

Scenario load_scenario(const ScenarioSources& sources) {
  const InputText workload = sources.workload ? read_input(*sources.workload) : embedded_default_workload();
  std::optional<std::filesystem::path> platform_file = sources.platform;
  if (!platform_file && sources.workload) platform_file = platform_named_by(workload);
  const InputText platform = platform_file ? read_input(*platform_file) : embedded_default_platform();
  Scenario scenario = load_scenario(workload, platform, sources.overrides);
  scenario.platform_file = platform.name;
  return scenario;
}

Workload parse_workload(const InputText& workload, const std::vector<std::string>& overrides) {
  return load_workload(workload, detail::parse_overrides(overrides)).workload;
}

hardware::ClusterSpec parse_platform(const InputText& platform, const std::vector<std::string>& overrides) {
  const std::vector<Override> parsed = detail::parse_overrides(overrides);
  for (const Override& o : parsed) {
    if (o.target != InputKind::workload) continue;
    InputError error(fmt::format("--set key '{}' sets the workload, but this command reads only a platform",
                                 o.argument.substr(0, o.argument.find('='))),
                     {},
                     "remove it: set name, device.*, node.*, cluster.* or whatif.* keys here; model.* and "
                     "training.* keys belong to twocs run");
    error.set_location(o.at(1));
    throw error;
  }
  return load_platform(platform, parsed).cluster;
}

InputText read_input(const std::filesystem::path& path) {
  const std::string name = path.string();
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status))
    throw InputError(fmt::format("cannot read '{}': no such file", name), {},
                     "check the path; the catalogue is in workloads/ and platforms/");
  if (std::filesystem::is_directory(status))
    throw InputError(fmt::format("cannot read '{}': it is a directory", name), {},
                     "name a YAML file inside it, e.g. workloads/gpt3-175b.yaml");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError(fmt::format("cannot read '{}': {}", name, std::generic_category().message(errno)), {},
                     "check that the file is readable");
  std::string text;
  char buffer[4096];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_input_bytes)
      throw InputError(fmt::format("cannot read '{}': it is larger than {} MiB", name, max_input_bytes >> 20), {},
                       "a scenario file is a few kilobytes of YAML; check the path");
  }
  if (in.bad())
    throw InputError(fmt::format("cannot read '{}': read error", name), {}, "check that the file is readable");
  return {name, std::move(text)};
}

InputText embedded_default_workload() {
  return {fmt::format("<embedded workloads/{}>", embedded::default_workload_name),
          std::string(embedded::default_workload)};
}

InputText embedded_default_platform() {
  return {fmt::format("<embedded platforms/{}>", embedded::default_platform_name),
          std::string(embedded::default_platform)};
}

} // namespace twocs::config
