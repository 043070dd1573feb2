#include <twocs/config/study.hpp>

#include "study_reader.hpp"

namespace twocs::config {

std::vector<std::string> Study::axis_keys() const {
  std::vector<std::string> keys;
  for (const StudyDimension& d : dimensions)
    for (const StudyAxis& a : d.axes) keys.push_back(a.key);
  return keys;
}

std::size_t Study::scenario_count() const {
  std::size_t count = 1;
  for (const StudyDimension& d : dimensions) count *= d.size();
  return count;
}

std::vector<std::string> Study::scenario_values(std::size_t index) const {
  // Mixed-radix digits of `index`, the last dimension the fastest (row-major order).
  std::vector<std::size_t> digit(dimensions.size());
  for (std::size_t i = dimensions.size(); i-- > 0;) {
    digit[i] = index % dimensions[i].size();
    index /= dimensions[i].size();
  }
  std::vector<std::string> values;
  for (std::size_t i = 0; i < dimensions.size(); ++i)
    for (const StudyAxis& a : dimensions[i].axes) values.push_back(a.values[digit[i]]);
  return values;
}

std::vector<std::string> Study::scenario_overrides(std::size_t index) const {
  return scenario_sources(index).overrides;
}

ScenarioSources Study::scenario_sources(std::size_t index) const {
  ScenarioSources sources{workload, platform, base_overrides};
  const std::vector<std::string> keys = axis_keys();
  const std::vector<std::string> values = scenario_values(index);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (!names_file(keys[i]))
      sources.overrides.push_back(keys[i] + "=" + values[i]);
    else
      (keys[i] == "workload" ? sources.workload : sources.platform) = study_path(directory, values[i]);
  }
  return sources;
}

std::filesystem::path study_path(const std::filesystem::path& directory, const std::string& written) {
  const std::filesystem::path path(written);
  return path.is_absolute() ? path : directory / path;
}

Study parse_study(const InputText& study, const std::filesystem::path& directory) {
  const detail::YamlNode root = detail::parse_yaml_file(study.text, study.name, "'study:', 'base:' and 'axes:'");
  const std::string stem = std::filesystem::path(study.name).stem().string();
  detail::ReadStudy read = detail::read_study(root, stem.empty() ? "study" : stem, directory);
  detail::check_study(read);
  return std::move(read.study);
}

Study load_study(const std::filesystem::path& file) { return parse_study(read_input(file), file.parent_path()); }

} // namespace twocs::config
