// Private: `twocs validate`, simulating the published runs of a validation file and comparing
// predicted with measured times (docs/validation.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include <twocs/config/validation_suite.hpp>
#include <twocs/units/quantity.hpp>

#include "run_command.hpp"

namespace CLI {
class App;
} // namespace CLI

namespace twocs::cli {

struct ValidateOptions {
  /// The validation file; none: workloads/validation/runs.yaml under the current folder.
  std::optional<std::filesystem::path> file;
  std::optional<std::filesystem::path> json;
  std::vector<std::string> overrides; // applied to every run after its own (what-ifs, ablations)
  std::vector<std::string> only;      // run names to simulate; empty: all
  FoldMode fold = FoldMode::automatic;
  std::uint64_t fold_above_tasks = 2'000'000; // as `twocs run`
  std::uint64_t max_tasks = 20'000'000;       // as `twocs run`
  bool ignore_memory = false;
  bool quiet = false;
};

/// One comparison: an iteration time, or a layer's forward or backward time.
struct ValidationRow {
  std::string name; // the run's name; layer rows add " forward" / " backward"
  std::string citation;
  std::string plan; // "512 (8 x 2 x 32)"
  config::ValidationKind kind = config::ValidationKind::iteration;
  units::Seconds measured;
  units::Seconds predicted;
  bool folded = false;
  std::uint64_t tasks = 0;
  units::Bytes peak_memory; // iteration rows: predicted peak per device
  units::Bytes capacity;
  bool fits = true;
  std::optional<units::Bytes> measured_peak_memory; // where the run's publication gives it

  [[nodiscard]] double error() const { return (predicted.value() - measured.value()) / measured.value(); }
  /// Predicted over measured peak memory, minus 1; only with a measured peak.
  [[nodiscard]] double memory_error() const {
    return (peak_memory.value() - measured_peak_memory->value()) / measured_peak_memory->value();
  }
};

/// Mean absolute and maximum absolute error of the rows of one kind.
struct ErrorStats {
  std::size_t rows = 0;
  double mean_abs = 0;
  double max_abs = 0;
};

[[nodiscard]] ErrorStats error_stats(const std::vector<ValidationRow>& rows, config::ValidationKind kind);
/// The same over the peak-memory errors of the rows with a measured peak.
[[nodiscard]] ErrorStats memory_error_stats(const std::vector<ValidationRow>& rows);

/// Simulates one run of a validation file: one row for an iteration, two for a layer.
[[nodiscard]] std::vector<ValidationRow> simulate_validation_run(const config::ValidationRun& run,
                                                                 const ValidateOptions& options, spdlog::logger& log);

/// Simulates every selected run of the file; throws InputError for an unknown --run name.
[[nodiscard]] std::vector<ValidationRow> run_validation(const ValidateOptions& options, spdlog::logger& log);

/// The terminal table and the JSON document of the results.
[[nodiscard]] std::string validation_table(const std::vector<ValidationRow>& rows);
[[nodiscard]] std::string validation_json(const std::vector<ValidationRow>& rows);

CLI::App* add_validate_command(CLI::App& app, ValidateOptions& options);
/// Runs `twocs validate`: prints the table, writes --json; throws OutOfMemoryError after
/// printing when a run does not fit (unless --ignore-memory).
void run_validate(const ValidateOptions& options, std::ostream& out, spdlog::logger& log);

} // namespace twocs::cli
