// The platform file (cluster) read from a located YAML tree, with defaults for the optional
// keys (topologies, oversubscription, operator-model parameters). Structural and type errors
// only: consistency is hardware::validate's job.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include <twocs/hardware/cluster.hpp>

#include "yaml_document.hpp"
#include "yaml_reader.hpp"

namespace twocs::config::detail {

/// `default_name` becomes the cluster's name when the file gives none (the file's stem).
[[nodiscard]] hardware::ClusterSpec read_platform(const YamlNode& root, std::string_view default_name);

/// `collectives: {tensor: ring, data: auto}`: the algorithm per communication kind, checked
/// against the names docs/network.md lists (cluster.network.collectives, training.collectives).
[[nodiscard]] std::map<std::string, std::string> read_collectives(const Field& field);

} // namespace twocs::config::detail
