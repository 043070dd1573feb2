// The HTML page of a study (`twocs report RESULTS.csv`, `twocs sweep --report`): one
// self-contained file with hand-written SVG charts (nothing fetched when viewing): the time
// breakdown of each scenario (compute, exposed tensor / pipeline / data communication, idle),
// communication fraction against each axis, hidden against exposed communication, MFU, and
// a compact table of every row (key columns; a link to the CSV for the rest).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <twocs/report/results_csv.hpp>

namespace twocs::report {

/// A figure a study file asks for (`figures:`): `metric` (a results column) against the axis
/// `x`, one line per value of the axis `series` (empty: one line).
struct StudyFigure {
  std::string x;
  std::string series;
  std::string metric;
};

struct StudyHtmlOptions {
  std::string title;                // default: "twocs study"
  std::string x_axis;               // the axis the fraction chart puts first; default: every axis, in order
  std::vector<StudyFigure> figures; // instead of the automatic fraction charts; empty: those
  std::string csv_href;             // the link to the full results CSV; empty: none
};

/// The axis columns of a results table: those between `scenario` and `status`.
[[nodiscard]] std::vector<std::string> axis_columns(const ResultsTable& table);

void write_study_html(std::ostream& out, const ResultsTable& table, const StudyHtmlOptions& options);

} // namespace twocs::report
