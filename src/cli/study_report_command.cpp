#include "study_report_command.hpp"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include <twocs/error.hpp>
#include <twocs/fileio/output_file.hpp>
#include <twocs/report/results_csv.hpp>
#include <twocs/report/study_html.hpp>

namespace twocs::cli {

CLI::App* add_study_report_command(CLI::App& app, StudyReportOptions& o) {
  auto* report = app.add_subcommand("report", "Write the HTML page of a sweep's results CSV");
  report->add_option("results", o.results, "Results CSV written by twocs sweep")->required();
  report->add_option("--output,-o", o.output, "HTML file to write")->required();
  report->add_option("--x", o.x_axis, "The axis to chart first (default: the study's first axis)");
  report->add_option("--title", o.title, "Page title (default: the CSV's file name)");
  return report;
}

void write_study_report(const std::filesystem::path& results, const std::filesystem::path& output,
                        const StudyReportOptions& options) {
  std::ifstream in(results, std::ios::binary);
  if (!in)
    throw InputError(fmt::format("cannot read '{}'", results.string()), {},
                     "name the CSV that twocs sweep wrote (--output)");
  std::ostringstream text;
  text << in.rdbuf();
  const report::ResultsTable table = report::parse_results_csv(text.str());
  if (table.column("scenario") != 0 || table.column("status") == table.columns.size()) {
    InputError error(
        fmt::format("'{}' is not a twocs sweep results CSV (no 'scenario' and 'status' columns)", results.string()), {},
        "give the CSV written by twocs sweep");
    error.set_location({results.string(), 1, 1});
    throw error;
  }
  report::StudyHtmlOptions html{options.title.empty() ? results.filename().string() : options.title, options.x_axis};
  fileio::write_file_atomically(output, [&](std::ostream& os) { report::write_study_html(os, table, html); });
}

} // namespace twocs::cli
