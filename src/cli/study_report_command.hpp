// Private: `twocs report RESULTS.csv -o study.html`, the HTML page of a sweep's results, and
// `twocs report --compare A.json B.json [-o FILE]`, two runs side by side.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <twocs/config/study.hpp>

namespace twocs::cli {

struct StudyReportOptions {
  std::filesystem::path results;
  std::filesystem::path output;
  std::vector<std::filesystem::path> compare; // --compare A.json B.json
  std::string x_axis;                         // the axis charted first
  std::string title;
  std::filesystem::path study;              // --study: the study file whose `figures:` the page draws
  std::vector<config::StudyFigure> figures; // from the study (sweep --report), or read from `study`
};

CLI::App* add_study_report_command(CLI::App& app, StudyReportOptions& options);

/// Reads `results` and writes the page atomically. Throws InputError for an unreadable CSV or
/// one that is not a sweep's (no scenario and status columns).
void write_study_report(const std::filesystem::path& results, const std::filesystem::path& output,
                        const StudyReportOptions& options);

/// `twocs report`: the study page, or with --compare the page of two run summaries (written to
/// -o, by default A-vs-B.html beside the current directory). Throws InputError for a missing
/// or extra argument, an unreadable file, or a file that is not what the mode reads.
void run_report_command(const StudyReportOptions& options, std::ostream& out);

} // namespace twocs::cli
