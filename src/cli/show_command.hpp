// Private: `twocs show platform [FILE] [--set KEY=VALUE]...`, printing a platform as twocs
// resolves it (defaults applied, --set applied) and what its operator model predicts for a few
// reference kernels.
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace twocs::cli {

struct ShowOptions {
  std::optional<std::filesystem::path> platform; // default: the embedded platform
  std::vector<std::string> overrides;
};

/// Registers `show` and its `platform` subcommand; returns `show`.
CLI::App* add_show_command(CLI::App& app, ShowOptions& options);

/// Throws InputError for bad inputs.
void run_show_platform(const ShowOptions& options, std::ostream& out);

} // namespace twocs::cli
