// Hardware what-ifs: the platform file's optional `whatif:` mapping scales a catalogue
// platform into a hypothetical one (faster compute, more memory, a better network), either by
// explicit factors or by N two-year hardware generations at published trend rates. Studies
// set these keys with --set (`whatif.compute_scale=2`, `whatif.generations=3`).
#pragma once

#include <twocs/hardware/cluster.hpp>

#include "yaml_reader.hpp"

namespace twocs::config::detail {

/// Reads `whatif:` and applies it to `cluster` (already read from the same file).
void apply_whatif(const Field& field, hardware::ClusterSpec& cluster);

} // namespace twocs::config::detail
