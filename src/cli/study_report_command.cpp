#include "study_report_command.hpp"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include <twocs/config/scenario_loader.hpp>
#include <twocs/config/study.hpp>
#include <twocs/error.hpp>
#include <twocs/fileio/output_file.hpp>
#include <twocs/report/compare_html.hpp>
#include <twocs/report/results_csv.hpp>
#include <twocs/report/study_html.hpp>

namespace twocs::cli {

CLI::App* add_study_report_command(CLI::App& app, StudyReportOptions& o) {
  auto* report = app.add_subcommand("report", "Write the HTML page of a sweep's results CSV, or compare two runs");
  report->add_option("results", o.results, "Results CSV written by twocs sweep");
  report->add_option("--output,-o", o.output, "HTML file to write (with --compare: default A-vs-B.html)");
  report->add_option("--compare", o.compare, "Two summaries written by twocs run --json, side by side")
      ->expected(2)
      ->excludes(report->get_option("results"));
  report->add_option("--x", o.x_axis, "The axis to chart first (default: the study's first axis)");
  report->add_option("--title", o.title, "Page title (default: the CSV's file name)");
  report->add_option("--study", o.study,
                     "The study file whose figures: list the page draws (default: automatic charts)");
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
  report::StudyHtmlOptions html;
  html.title = options.title.empty() ? results.filename().string() : options.title;
  html.x_axis = options.x_axis;
  std::vector<config::StudyFigure> figures = options.figures;
  if (!options.study.empty()) figures = config::load_study(options.study).figures;
  for (const config::StudyFigure& f : figures) html.figures.push_back({f.x, f.series, f.metric});
  // The page links the full CSV by its path relative to the page's folder.
  const auto absolute = [](const std::filesystem::path& p) { return std::filesystem::absolute(p).lexically_normal(); };
  html.csv_href = absolute(results).lexically_relative(absolute(output).parent_path()).generic_string();
  fileio::write_file_atomically(output, [&](std::ostream& os) { report::write_study_html(os, table, html); });
}

void run_report_command(const StudyReportOptions& options, std::ostream& out) {
  if (options.compare.empty()) {
    if (options.results.empty())
      throw InputError("twocs report: nothing to report", {},
                       "give a sweep's CSV (twocs report RESULTS.csv -o study.html) or two run summaries "
                       "(twocs report --compare A.json B.json)");
    if (options.output.empty())
      throw InputError("twocs report: --output is required for a study page", {}, "add -o study.html");
    write_study_report(options.results, options.output, options);
    return;
  }
  const auto read = [](const std::filesystem::path& path) {
    config::InputText input = config::read_input(path);
    return report::RunSummaryText{std::move(input.name), std::move(input.text)};
  };
  const std::string page = report::compare_html(read(options.compare[0]), read(options.compare[1]));
  const std::filesystem::path output = options.output.empty()
                                           ? std::filesystem::path(options.compare[0].stem().string() + "-vs-" +
                                                                   options.compare[1].stem().string() + ".html")
                                           : options.output;
  fileio::write_file_atomically(output, [&](std::ostream& os) { os << page; });
  out << "twocs: wrote " << output.string() << "\n";
}

} // namespace twocs::cli
