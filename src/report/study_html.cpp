#include <twocs/report/study_html.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <twocs/fileio/text_escape.hpp>

#include "study_charts.hpp"

namespace twocs::report {
namespace {

using detail::cell_number;
using fileio::html_escape;

constexpr std::string_view style = R"(<style>
body { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 12px; } td, th { padding: 2px 6px; border-bottom: 1px solid #eee; }
svg text { font-size: 11px; fill: #333; } .legend span { margin-right: 1.2em; font-size: 12px; }
/* Charts fill the page's width (their viewBox scales); rotated labels of the first bars reach
   left of the axis, into the margin. */
svg.chart { display: block; margin-left: 48px; width: calc(100% - 48px); height: auto; }
.legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; }
.scroll { overflow-x: auto; max-height: 30em; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
</style>
)";

struct View {
  const ResultsTable& table;
  std::vector<const std::vector<std::string>*> ok; // rows with status ok
  [[nodiscard]] double at(const std::vector<std::string>& row, std::string_view column) const {
    const std::size_t c = table.column(column);
    return c < row.size() ? cell_number(row[c]) : std::nan("");
  }
  [[nodiscard]] std::string label(const std::vector<std::string>& row) const {
    std::string text = "#" + row.front();
    for (const std::string& axis : axis_columns(table)) text += " " + row[table.column(axis)];
    return text;
  }
};

/// Whether any ok row has a non-zero value in `column` (a CSV from before the column existed has none).
bool any_nonzero(const View& v, std::string_view column) {
  return std::any_of(v.ok.begin(), v.ok.end(), [&](const auto* row) {
    const double x = v.at(*row, column);
    return std::isfinite(x) && x != 0;
  });
}

void breakdown_chart(fmt::memory_buffer& out, const View& v) {
  // Exposed communication by kind; MoE's expert and context parallelism's kinds only where a
  // scenario has them, so that a dense study's legend stays as it was.
  std::vector<std::string_view> kinds = {"tensor", "pipeline", "data"};
  for (std::string_view kind : {"expert", "context"})
    if (any_nonzero(v, fmt::format("exposed_comm_by_kind_s.{}", kind))) kinds.push_back(kind);
  detail::StackedBars bars;
  bars.part_names = {"compute"};
  for (std::string_view kind : kinds) bars.part_names.push_back(fmt::format("exposed {} comm", kind));
  bars.part_names.emplace_back("idle");
  for (const auto* row : v.ok) {
    bars.labels.push_back(v.label(*row));
    std::vector<double> parts{v.at(*row, "breakdown_s.compute")};
    for (std::string_view kind : kinds) parts.push_back(v.at(*row, fmt::format("exposed_comm_by_kind_s.{}", kind)));
    parts.push_back(v.at(*row, "breakdown_s.idle"));
    bars.parts.push_back(std::move(parts));
    bars.tooltips.push_back(fmt::format("{}: iteration {:.4g} s", v.label(*row), v.at(*row, "iteration_time_s")));
  }
  bars.unit = " s";
  fmt::format_to(std::back_inserter(out), "<h2>Where the iteration time goes</h2>\n");
  detail::stacked_bar_chart(out, bars, true, "share of iteration time");
}

void hidden_chart(fmt::memory_buffer& out, const View& v) {
  detail::StackedBars bars;
  bars.part_names = {"hidden (overlapped) comm", "exposed comm"};
  for (const auto* row : v.ok) {
    bars.labels.push_back(v.label(*row));
    bars.parts.push_back({v.at(*row, "breakdown_s.overlapped_comm"), v.at(*row, "breakdown_s.exposed_comm")});
    bars.tooltips.push_back(fmt::format("{}: comm busy {:.4g} s", v.label(*row), v.at(*row, "comm_busy_s")));
  }
  bars.unit = " s";
  fmt::format_to(std::back_inserter(out), "<h2>Hidden against exposed communication</h2>\n");
  detail::stacked_bar_chart(out, bars, false, "seconds");
}

void mfu_chart(fmt::memory_buffer& out, const View& v) {
  detail::StackedBars bars;
  bars.part_names = {"MFU"};
  for (const auto* row : v.ok) {
    bars.labels.push_back(v.label(*row));
    bars.parts.push_back({v.at(*row, "mfu")});
    bars.tooltips.push_back(fmt::format("{}: MFU {:.3f}", v.label(*row), v.at(*row, "mfu")));
  }
  fmt::format_to(std::back_inserter(out), "<h2>Model FLOPs utilisation</h2>\n");
  detail::stacked_bar_chart(out, bars, false, "MFU");
}

void fraction_chart(fmt::memory_buffer& out, const View& v, const std::string& axis) {
  detail::Scatter chart{axis, "fraction", {}, {"comm fraction", "exposed comm fraction"}, {{}, {}}};
  const std::size_t column = v.table.column(axis);
  for (const auto* row : v.ok) {
    const std::string& x = (*row)[column];
    auto it = std::find(chart.categories.begin(), chart.categories.end(), x);
    if (it == chart.categories.end()) it = chart.categories.insert(chart.categories.end(), x);
    const auto c = static_cast<std::size_t>(it - chart.categories.begin());
    for (std::size_t s = 0; s < 2; ++s) {
      const double y = v.at(*row, s == 0 ? "comm_fraction" : "exposed_comm_fraction");
      if (std::isfinite(y)) chart.points[s].emplace_back(c, y);
    }
  }
  fmt::format_to(std::back_inserter(out), "<h2>Communication fraction against {}</h2>\n", html_escape(axis));
  detail::scatter_chart(out, chart);
}

/// Whether each value of `a` goes with one value of `b` and back over every row: axes zipped
/// together (a study's `zip:` entry), which one chart shows as well as several.
bool moves_together(const ResultsTable& table, const std::string& a, const std::string& b) {
  std::map<std::string, std::string> forward, backward;
  const std::size_t ca = table.column(a), cb = table.column(b);
  for (const auto& row : table.rows) {
    if (ca >= row.size() || cb >= row.size()) return false;
    const std::string& paired = forward.emplace(row[ca], row[cb]).first->second;
    const std::string& back = backward.emplace(row[cb], row[ca]).first->second;
    if (paired != row[cb] || back != row[ca]) return false;
  }
  return true;
}

/// The axes to chart: the first of each group that moves together (`axes` in the page's order).
std::vector<std::string> independent_axes(const ResultsTable& table, const std::vector<std::string>& axes) {
  std::vector<std::string> kept;
  for (const std::string& axis : axes)
    if (std::none_of(kept.begin(), kept.end(), [&](const std::string& k) { return moves_together(table, k, axis); }))
      kept.push_back(axis);
  return kept;
}

/// `metric` against `x`, one line per value of `series` (the paper's figure of hardware
/// generations: one line per model), or one line when `series` is empty.
void series_chart(fmt::memory_buffer& out, const View& v, const StudyFigure& figure, const std::string& heading) {
  const std::string &x = figure.x, &series = figure.series, &metric = figure.metric;
  detail::Scatter chart{x, metric, {}, {}, {}};
  const std::size_t cx = v.table.column(x), cs = series.empty() ? cx : v.table.column(series);
  for (const auto* row : v.ok) {
    const auto index_of = [](std::vector<std::string>& names, const std::string& name) {
      auto it = std::find(names.begin(), names.end(), name);
      if (it == names.end()) it = names.insert(names.end(), name);
      return static_cast<std::size_t>(it - names.begin());
    };
    const std::size_t c = index_of(chart.categories, (*row)[cx]);
    const std::size_t s = index_of(chart.series_names, series.empty() ? metric : (*row)[cs]);
    if (chart.points.size() <= s) chart.points.resize(s + 1);
    if (const double y = v.at(*row, metric); std::isfinite(y)) chart.points[s].emplace_back(c, y);
  }
  fmt::format_to(std::back_inserter(out), "<h2>{}</h2>\n", html_escape(heading));
  detail::scatter_chart(out, chart);
}

void status_line(fmt::memory_buffer& out, const ResultsTable& table) {
  std::map<std::string, std::size_t> counts;
  const std::size_t status = table.column("status");
  for (const auto& row : table.rows) ++counts[status < row.size() ? row[status] : "?"];
  std::string text;
  for (const auto& [name, count] : counts) text += fmt::format("{}{} {}", text.empty() ? "" : ", ", count, name);
  fmt::format_to(std::back_inserter(out), "<p>{} scenarios: {}.</p>\n", table.rows.size(), html_escape(text));
}

/// A fractional number shows 4 significant digits, the CSV's full text on hover; whole numbers
/// (indices, counts, bytes) and text as written.
void table_cell(fmt::memory_buffer& out, const std::string& cell) {
  const double v = cell_number(cell);
  const bool fractional = std::isfinite(v) && cell.find_first_of(".eE") != std::string::npos;
  if (!fractional) {
    fmt::format_to(std::back_inserter(out), "<td>{}</td>", html_escape(cell));
    return;
  }
  fmt::format_to(std::back_inserter(out), "<td class=\"n\" title=\"{}\">{:.4g}</td>", html_escape(cell), v);
}

/// The columns a reader compares: scenario, the axes, status and reason, and the headline results.
std::vector<std::size_t> key_columns(const ResultsTable& table) {
  std::vector<std::string> names{"scenario"};
  for (const std::string& axis : axis_columns(table)) names.push_back(axis);
  for (const char* name :
       {"status", "reason", "iteration_time_s", "comm_fraction", "exposed_comm_fraction", "mfu", "memory.peak_bytes"})
    names.emplace_back(name);
  std::vector<std::size_t> columns;
  for (const std::string& name : names)
    if (const std::size_t c = table.column(name); c < table.columns.size()) columns.push_back(c);
  return columns;
}

void rows_table(fmt::memory_buffer& out, const ResultsTable& table, const std::string& csv_href) {
  auto o = std::back_inserter(out);
  const std::vector<std::size_t> columns = key_columns(table);
  fmt::format_to(o, "<h2>All scenarios</h2>\n<p>{} of the results' {} columns", columns.size(), table.columns.size());
  if (!csv_href.empty()) fmt::format_to(o, "; all of them in <a href=\"{0}\">{0}</a>", html_escape(csv_href));
  fmt::format_to(o, ".</p>\n<div class=\"scroll\"><table><tr>");
  for (const std::size_t c : columns) fmt::format_to(o, "<th>{}</th>", html_escape(table.columns[c]));
  fmt::format_to(o, "</tr>\n");
  for (const auto& row : table.rows) {
    fmt::format_to(o, "<tr>");
    for (const std::size_t c : columns) table_cell(out, c < row.size() ? row[c] : std::string());
    fmt::format_to(o, "</tr>\n");
  }
  fmt::format_to(o, "</table></div>\n");
}

/// The communication-fraction charts the page draws when the study names no figures: one per
/// independent axis, and with two such axes one line per value of one against the other.
void automatic_charts(fmt::memory_buffer& page, const View& view, const StudyHtmlOptions& options,
                      std::vector<std::string> axes) {
  const ResultsTable& table = view.table;
  axes = independent_axes(table, axes);
  for (const std::string& axis : axes) fraction_chart(page, view, axis);
  // Two independent axes: one line per value of the one with fewer values (or the second, with
  // --x naming the first), against the other.
  if (axes.size() != 2) return;
  const auto distinct = [&](const std::string& axis) {
    std::set<std::string> values;
    for (const auto* row : view.ok) values.insert((*row)[table.column(axis)]);
    return values.size();
  };
  const bool first_is_x = !options.x_axis.empty() || distinct(axes[0]) > distinct(axes[1]);
  const StudyFigure figure{axes[first_is_x ? 0 : 1], axes[first_is_x ? 1 : 0], "comm_fraction"};
  series_chart(page, view, figure,
               fmt::format("Communication fraction against {}, one line per {}", figure.x, figure.series));
}

} // namespace

std::vector<std::string> axis_columns(const ResultsTable& table) {
  const std::size_t status = table.column("status");
  if (table.columns.empty() || status == table.columns.size()) return {};
  return {table.columns.begin() + 1, table.columns.begin() + static_cast<long>(status)};
}

void write_study_html(std::ostream& out, const ResultsTable& table, const StudyHtmlOptions& options) {
  View view{table, {}};
  const std::size_t status = table.column("status");
  for (const auto& row : table.rows)
    if (status < row.size() && row[status] == "ok") view.ok.push_back(&row);
  std::vector<std::string> axes = axis_columns(table);
  if (const auto it = std::find(axes.begin(), axes.end(), options.x_axis); it != axes.end())
    std::rotate(axes.begin(), it, it + 1);
  const std::string title = options.title.empty() ? "twocs study" : options.title;
  fmt::memory_buffer page;
  auto o = std::back_inserter(page);
  fmt::format_to(
      o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\n{}</head><body>\n",
      html_escape(title), style);
  fmt::format_to(o, "<h1>{}</h1>\n", html_escape(title));
  status_line(page, table);
  breakdown_chart(page, view);
  if (options.figures.empty()) automatic_charts(page, view, options, axes);
  for (const StudyFigure& figure : options.figures) {
    const bool known = table.column(figure.x) < table.columns.size() &&
                       table.column(figure.metric) < table.columns.size() &&
                       (figure.series.empty() || table.column(figure.series) < table.columns.size());
    const std::string heading =
        figure.metric + " against " + figure.x + (figure.series.empty() ? "" : ", one line per " + figure.series);
    if (known)
      series_chart(page, view, figure, heading);
    else // a CSV from another study than the one named
      fmt::format_to(o, "<h2>{}</h2>\n<p>Not drawn: the results have no such column.</p>\n", html_escape(heading));
  }
  hidden_chart(page, view);
  mfu_chart(page, view);
  rows_table(page, table, options.csv_href);
  fmt::format_to(o, "</body></html>\n");
  out.write(page.data(), static_cast<std::streamsize>(page.size()));
}

} // namespace twocs::report
