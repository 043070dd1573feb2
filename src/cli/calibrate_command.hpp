// Private: `twocs calibrate PROFILE.csv`, fitting a device's operator-model parameters to
// measured kernel times (docs/operator-models.md, "Calibration").
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace twocs::cli {

struct CalibrateOptions {
  std::filesystem::path profile;
  std::optional<std::filesystem::path> platform; // the device to start from; default: embedded
  std::vector<std::string> overrides;            // --set on that platform
  std::optional<std::string> device_name;
  std::optional<std::filesystem::path> output; // the fitted fragment
  bool with_table = false;                     // also write the measurements into the fragment
};

/// Registers the subcommand on `app`; returns it so that run_cli can tell it was chosen.
CLI::App* add_calibrate_command(CLI::App& app, CalibrateOptions& options);

/// Fits, prints the parameters and the errors per kernel, per op and overall, and writes the
/// fragment. Throws InputError for bad inputs.
void run_calibrate(const CalibrateOptions& options, std::ostream& out);

} // namespace twocs::cli
