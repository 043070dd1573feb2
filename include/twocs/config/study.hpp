// A study (`twocs sweep STUDY.yaml`): a base workload and platform, base --set overrides, and
// axes of dotted keys whose values make a cartesian product of scenarios; a `zip:` axis
// advances several keys together. Format: docs/studies.md and docs/input-formats.md.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <twocs/config/scenario_loader.hpp>

namespace twocs::config {

/// One key and its values, each as YAML text that `--set KEY=VALUE` accepts; for the keys
/// `workload` and `platform` (Study::names_file), file paths relative to the study's folder.
struct StudyAxis {
  std::string key;
  std::vector<std::string> values;
};

/// One factor of the cartesian product: a single axis, or several zipped (equal lengths).
struct StudyDimension {
  std::vector<StudyAxis> axes;
  [[nodiscard]] std::size_t size() const { return axes.front().values.size(); }
};

/// A figure the study asks its report for (`figures:`): `metric`, a results column, against the
/// axis key `x`, one line per value of the axis key `series` (empty: one line).
struct StudyFigure {
  std::string x;
  std::string series;
  std::string metric;
};

/// The results columns a figure may plot (docs/outputs.md), numbers every scenario has.
[[nodiscard]] std::span<const std::string_view> study_figure_metrics();

struct Study {
  std::string name;
  std::optional<std::filesystem::path> workload; // resolved against the study's folder; none: embedded
  std::optional<std::filesystem::path> platform;
  std::vector<std::string> base_overrides; // "KEY=VALUE", applied before the axes
  std::vector<StudyDimension> dimensions;
  std::vector<StudyFigure> figures; // none: the report draws its automatic charts
  std::filesystem::path directory;  // the study file's folder, against which file axes resolve

  /// Whether an axis `key` names files in place of the base ones (`workload`, `platform`)
  /// rather than a --set key.
  [[nodiscard]] static bool names_file(std::string_view key) { return key == "workload" || key == "platform"; }

  /// Every axis key, in the order the file gives them (the CSV's axis columns).
  [[nodiscard]] std::vector<std::string> axis_keys() const;
  /// The product of the dimensions' sizes (1 with no axes).
  [[nodiscard]] std::size_t scenario_count() const;
  /// Scenario `index`'s value of each axis key; the last dimension varies fastest.
  [[nodiscard]] std::vector<std::string> scenario_values(std::size_t index) const;
  /// The base overrides followed by scenario `index`'s "KEY=VALUE" for each axis but the file axes.
  [[nodiscard]] std::vector<std::string> scenario_overrides(std::size_t index) const;
  /// What `twocs run` needs for scenario `index`: the base files or the file axes' values, and
  /// the overrides.
  [[nodiscard]] ScenarioSources scenario_sources(std::size_t index) const;
};

/// A path written in a study file (`base:` or a file axis): as written when absolute, else
/// against the study's folder `directory`.
[[nodiscard]] std::filesystem::path study_path(const std::filesystem::path& directory, const std::string& written);

/// Studies larger than this are refused (a typo in an axis is likelier than a wish for more).
inline constexpr std::size_t max_study_scenarios = 1'000'000;

/// Reads a study file and checks it: its keys, its axes (a key given twice, empty value lists,
/// zipped lists of unequal length) and that every axis key and value reads in the base
/// workload or platform. Errors are InputErrors naming the study file's line and column.
[[nodiscard]] Study load_study(const std::filesystem::path& file);

/// The same from text; relative paths in `base:` resolve against `directory`.
[[nodiscard]] Study parse_study(const InputText& study, const std::filesystem::path& directory);

} // namespace twocs::config
