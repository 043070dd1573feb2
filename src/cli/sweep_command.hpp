// Private: `twocs sweep STUDY.yaml [--jobs N] [--output CSV] [--report HTML] [--timeout S]`.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <ostream>

#include <CLI/CLI.hpp>

namespace twocs::cli {

struct SweepCommandOptions {
  std::filesystem::path study;
  std::optional<std::filesystem::path> output; // default: <study name>.csv in the current folder
  std::optional<std::filesystem::path> report;
  std::size_t jobs = 0; // 0: all cores
  double timeout_s = 0; // 0: none
};

CLI::App* add_sweep_command(CLI::App& app, SweepCommandOptions& options);

/// Returns the exit code: 0 when every scenario ran (whatever its status), 128 + the signal
/// when stopped early (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP) or when a scenario's process was
/// stopped from outside (its row left for the rerun). Throws InputError for a bad study or
/// output (another sweep on the same CSV, a line twocs never wrote, a full disk).
int run_sweep_command(const SweepCommandOptions& options, std::ostream& out, std::ostream& err);

} // namespace twocs::cli
