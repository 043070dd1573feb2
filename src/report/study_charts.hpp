// Private: the SVG charts of the study page (study_html.cpp), drawn from the results table.
#pragma once

#include <string>
#include <vector>

#include <fmt/format.h>

#include <twocs/report/results_csv.hpp>

namespace twocs::report::detail {

/// A number from a CSV cell; NaN when empty or not a number.
[[nodiscard]] double cell_number(const std::string& cell);

/// Stacked bars, one per row: each part a share of the bar; `labels` under the bars.
struct StackedBars {
  std::vector<std::string> labels;
  std::vector<std::string> part_names;
  std::vector<std::vector<double>> parts; // per bar, per part (any unit; the bar is their sum)
  std::vector<std::string> tooltips;      // per bar
  std::string unit;                       // after each part's value in its tooltip, e.g. " s"
};
void stacked_bar_chart(fmt::memory_buffer& out, const StackedBars& bars, bool normalise, const std::string& y_label);

/// Points of one or more series against categorical x values, with each category's mean joined.
struct Scatter {
  std::string x_label;
  std::string y_label;
  std::vector<std::string> categories;                             // x positions, in order
  std::vector<std::string> series_names;                           // e.g. "comm fraction", "exposed comm fraction"
  std::vector<std::vector<std::pair<std::size_t, double>>> points; // per series: (category, y)
};
void scatter_chart(fmt::memory_buffer& out, const Scatter& chart);

} // namespace twocs::report::detail
