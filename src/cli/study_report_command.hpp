// Private: `twocs report RESULTS.csv -o study.html`, the HTML page of a sweep's results.
#pragma once

#include <filesystem>
#include <string>

#include <CLI/CLI.hpp>

namespace twocs::cli {

struct StudyReportOptions {
  std::filesystem::path results;
  std::filesystem::path output;
  std::string x_axis; // the axis charted first
  std::string title;
};

CLI::App* add_study_report_command(CLI::App& app, StudyReportOptions& options);

/// Reads `results` and writes the page atomically. Throws InputError for an unreadable CSV or
/// one that is not a sweep's (no scenario and status columns).
void write_study_report(const std::filesystem::path& results, const std::filesystem::path& output,
                        const StudyReportOptions& options);

} // namespace twocs::cli
