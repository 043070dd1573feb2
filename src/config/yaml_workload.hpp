// The workload file (model + training plan) read from a located YAML tree, with the
// contract's defaults applied. Structural and type errors only: consistency is
// model::validate's job.
#pragma once

#include <string_view>

#include <twocs/config/scenario_loader.hpp>

#include "yaml_document.hpp"

namespace twocs::config::detail {

/// `default_name` becomes model.name when the file gives none (the file's stem).
[[nodiscard]] Workload read_workload(const YamlNode& root, std::string_view default_name);

} // namespace twocs::config::detail
