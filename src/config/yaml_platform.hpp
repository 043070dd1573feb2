// The platform file (cluster) read from a located YAML tree, with defaults for the optional
// keys (topologies, oversubscription, operator-model parameters). Structural and type errors
// only: consistency is hardware::validate's job.
#pragma once

#include <string_view>

#include <twocs/hardware/cluster.hpp>

#include "yaml_document.hpp"

namespace twocs::config::detail {

/// `default_name` becomes the cluster's name when the file gives none (the file's stem).
[[nodiscard]] hardware::ClusterSpec read_platform(const YamlNode& root, std::string_view default_name);

} // namespace twocs::config::detail
