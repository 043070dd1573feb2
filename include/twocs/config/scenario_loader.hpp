// Reading a scenario: the workload file (model + training plan) and the platform file
// (cluster), strictly checked against the contract (docs/input-formats.md), with --set
// overrides applied before checking. Every error a user can cause is an InputError that
// names the file, line and column (or the --set argument) and the fix.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <twocs/config/plan_search_request.hpp>
#include <twocs/error.hpp>
#include <twocs/hardware/cluster.hpp>
#include <twocs/model/training_plan.hpp>
#include <twocs/model/transformer.hpp>

namespace twocs::config {

struct Workload {
  model::TransformerConfig model;
  model::TrainingPlan plan;
  /// With an objective, `plan`'s tensor, pipeline, data and virtual degrees are placeholders
  /// (1, with data = expert) that the plan search replaces; the stated ones are not checked.
  PlanSearchRequest search;
  /// `training.collectives`: algorithm per communication kind; each kind named here replaces the
  /// platform's `cluster.network.collectives` entry (docs/network.md, "Automatic choice").
  std::map<std::string, std::string> collectives;
};

namespace detail {
struct ScenarioDocuments; // the workload's and platform's located YAML trees, after --set
} // namespace detail

struct Scenario {
  Workload workload;
  hardware::ClusterSpec cluster;
  /// Where the platform came from: --platform, the workload's `platform:` key, or
  /// "<embedded platforms/...>" (set by load_scenario(const ScenarioSources&)).
  std::string platform_file;
  /// Where each key was given, for errors found after reading (plan search, the simulation's
  /// limits): see locate_in_scenario. Null for a scenario built in code.
  std::shared_ptr<const detail::ScenarioDocuments> documents;
};

/// Gives `error`, when it has none yet, the location of its key in the scenario's files: a
/// model.* or training.* key in the workload, any other in the platform; the --set argument
/// that set it; the key's nearest parent in the file when it was left to its default. An error
/// without a key, or about a flag ("--fold"), is left as it is.
void locate_in_scenario(const Scenario& scenario, InputError& error);

/// Text of an input with the name errors should use for it ("workloads/gpt3.yaml",
/// "<embedded default workload>").
struct InputText {
  std::string name;
  std::string text;
};

struct ScenarioSources {
  std::optional<std::filesystem::path> workload; // none: the embedded default workload
  /// none: the file the workload's top-level `platform:` key names (relative to the workload
  /// file), else the embedded default platform
  std::optional<std::filesystem::path> platform;
  /// "KEY=VALUE" with KEY a dotted path; `model.*` and `training.*` go to the workload, the
  /// platform's top-level keys (`name`, `device.*`, `node.*`, `cluster.*`) to the platform.
  std::vector<std::string> overrides;
};

/// The platform file a workload names with its top-level `platform:` key, resolved against the
/// workload file's folder; none without the key. Throws InputError, located at the key, when
/// the value is not a path or names no file.
[[nodiscard]] std::optional<std::filesystem::path> platform_named_by(const InputText& workload);

/// Reads, overrides and validates both files, then checks them against each other (world
/// size versus devices, a peak FLOP rate for the training dtype).
[[nodiscard]] Scenario load_scenario(const ScenarioSources& sources);

/// The same from texts already in memory (tests, the embedded default, sweeps).
[[nodiscard]] Scenario load_scenario(const InputText& workload, const InputText& platform,
                                     const std::vector<std::string>& overrides = {});

[[nodiscard]] Workload parse_workload(const InputText& workload, const std::vector<std::string>& overrides = {});
/// The platform alone (`twocs collbench`, `show platform`, `calibrate`): an override of a
/// workload key (model.*, training.*) is an InputError, never silently ignored.
[[nodiscard]] hardware::ClusterSpec parse_platform(const InputText& platform,
                                                   const std::vector<std::string>& overrides = {});

/// Reads a whole file; a missing or unreadable file is an InputError naming it.
[[nodiscard]] InputText read_input(const std::filesystem::path& path);

/// The default scenario compiled into the program (workloads/default.yaml and
/// platforms/dgx-a100-80gb.yaml as they were at build time).
[[nodiscard]] InputText embedded_default_workload();
[[nodiscard]] InputText embedded_default_platform();

} // namespace twocs::config
