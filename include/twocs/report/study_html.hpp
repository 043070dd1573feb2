// The HTML page of a study (`twocs report RESULTS.csv`, `twocs sweep --report`): one
// self-contained file with hand-written SVG charts (nothing fetched when viewing): the time
// breakdown of each scenario (compute, exposed tensor / pipeline / data communication, idle),
// communication fraction against each axis, hidden against exposed communication, MFU, and
// the table of every row.
#pragma once

#include <ostream>
#include <string>

#include <twocs/report/results_csv.hpp>

namespace twocs::report {

struct StudyHtmlOptions {
  std::string title;  // default: "twocs study"
  std::string x_axis; // the axis the fraction chart puts first; default: every axis, in order
};

/// The axis columns of a results table: those between `scenario` and `status`.
[[nodiscard]] std::vector<std::string> axis_columns(const ResultsTable& table);

void write_study_html(std::ostream& out, const ResultsTable& table, const StudyHtmlOptions& options);

} // namespace twocs::report
