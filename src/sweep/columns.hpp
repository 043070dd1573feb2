// Private: the columns of a study's results CSV (docs/outputs.md, "Sweep results") and one
// scenario's row: scenario index, axis values, status and reason, the JSON summary's scalar
// fields flattened with dots, the plan and model size the scenario ran, and wall time.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <twocs/config/study.hpp>
#include <twocs/sweep/status.hpp>

namespace twocs::sweep::detail {

[[nodiscard]] std::vector<std::string> csv_header(const config::Study& study);

struct ScenarioOutcome {
  std::size_t index = 0;
  Status status = Status::error;
  std::string reason;
  std::optional<nlohmann::json> summary; // the child's --json, when it wrote one
  double wall_time_s = 0;                // the child process, start to exit
};

/// The row for `outcome` (same length as csv_header(study)).
[[nodiscard]] std::vector<std::string> csv_row(const config::Study& study, const ScenarioOutcome& outcome);

} // namespace twocs::sweep::detail
