// Reading a platform's `provenance:` section: one statement per parameter the file sets, keyed by
// the parameter's dotted path (docs/platform-model.md, "Provenance"). Strict as every other key:
// an unknown class, a missing citation, a statement for a parameter the file does not set.
#pragma once

#include <vector>

#include <twocs/config/parameter_provenance.hpp>

#include "yaml_document.hpp"

namespace twocs::config::detail {

/// Checks the `provenance:` section of `root` as read_provenance does, without describing the
/// values (every platform load does this; only `twocs show platform` needs the descriptions).
void check_provenance(const YamlNode& root);

/// The statements of `root` (a platform file after overrides), in the order of
/// provenance_parameters(), and the parameters it sets without one. Throws InputError.
[[nodiscard]] PlatformProvenance read_provenance(const YamlNode& root);

} // namespace twocs::config::detail
