// Private: `twocs analyze [--workload F] [--platform F] [--set K=V]... [--json F] [--csv F]
// [--study S]`, the closed-form compute-versus-communication analysis (no simulation).
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace twocs::cli {

struct AnalyzeOptions {
  std::optional<std::filesystem::path> workload;
  std::optional<std::filesystem::path> platform;
  std::vector<std::string> overrides;
  std::optional<std::filesystem::path> json;
  std::optional<std::filesystem::path> csv;
  std::optional<std::filesystem::path> study; // every scenario of a study, one CSV row each
};

CLI::App* add_analyze_command(CLI::App& app, AnalyzeOptions& options);

/// Throws InputError for bad inputs.
void run_analyze(const AnalyzeOptions& options, std::ostream& out);

} // namespace twocs::cli
