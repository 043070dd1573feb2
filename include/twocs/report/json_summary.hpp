// The --json summary: every field of the contract (docs/outputs.md) plus extras.
#pragma once

#include <string>

#include <twocs/analysis/summary.hpp>

namespace twocs::report {

/// The summary as pretty-printed JSON text (keys in a fixed order; deterministic).
[[nodiscard]] std::string json_summary(const analysis::Summary& summary);

} // namespace twocs::report
