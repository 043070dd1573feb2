// Private: the study file read from a located YAML tree (study_reader.cpp) and checked against
// its base workload and platform (study_check.cpp). Every --set a study makes remembers where
// in the study file its key and value are, so that a bad key is reported there.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <twocs/config/study.hpp>

#include "yaml_document.hpp"
#include "yaml_reader.hpp"

namespace twocs::config::detail {

struct LocatedSet {
  std::string argument;       // "KEY=VALUE"
  std::size_t key_length = 0; // characters of KEY
  SourceLocation key_where;   // the key in the study file
  SourceLocation value_where; // the value in the study file
  /// A file axis's value (Study::names_file): the file, resolved against the study's folder.
  std::optional<std::filesystem::path> file;
};

struct ReadStudy {
  Study study;
  std::vector<LocatedSet> base;                   // base.set, in order
  std::vector<std::vector<LocatedSet>> axis_sets; // per axis key (axis_keys() order), per value
  SourceLocation workload_where, platform_where;  // base.workload and base.platform, when given
};

[[nodiscard]] ReadStudy read_study(const YamlNode& root, const std::string& default_name,
                                   const std::filesystem::path& directory);

/// The `figures:` list: each {x, series, metric} names axis keys of the study and a metric of
/// study_figure_metrics(); anything else is an InputError at its line and column.
[[nodiscard]] std::vector<StudyFigure> read_figures(const Field& field, const std::vector<std::string>& axis_keys);

/// Applies every base and axis --set to the base files and reads them (keys and value types;
/// consistency is left to each scenario). Errors point into the study file.
void check_study(const ReadStudy& study);

} // namespace twocs::config::detail
