#include <twocs/report/compare_html.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <twocs/error.hpp>
#include <twocs/fileio/text_escape.hpp>
#include <twocs/units/format.hpp>

#include "study_charts.hpp"

namespace twocs::report {
namespace {

using fileio::html_escape;
using Json = nlohmann::json;

struct ComparedRun {
  std::string label;
  Json summary;
};

constexpr std::string_view style = R"(<style>
body { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 13px; } td, th { padding: 3px 10px; border-bottom: 1px solid #eee; }
td.n { text-align: right; font-variant-numeric: tabular-nums; } th { text-align: left; }
.better { color: #007a3d; } .worse { color: #b00020; }
svg text { font-size: 11px; fill: #333; } .legend span { margin-right: 1.2em; font-size: 12px; }
.legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; }
</style>
)";

// How a row's values are written and which direction is an improvement.
enum class Unit { seconds, fraction, bytes, flop_rate, count };
enum class Better { lower, higher, neither };

struct Row {
  std::string_view label;
  std::string_view pointer; // a JSON pointer into the summary
  Unit unit;
  Better better;
};

// The summary's headline fields (docs/outputs.md, "JSON summary").
constexpr std::array headline = {
    Row{"iteration time", "/iteration_time_s", Unit::seconds, Better::lower},
    Row{"MFU", "/mfu", Unit::fraction, Better::higher},
    Row{"model throughput per device", "/model_flops_per_device_per_s", Unit::flop_rate, Better::higher},
    Row{"comm fraction", "/comm_fraction", Unit::fraction, Better::neither},
    Row{"exposed comm fraction", "/exposed_comm_fraction", Unit::fraction, Better::lower},
    Row{"peak memory per device", "/memory/peak_bytes", Unit::bytes, Better::lower},
    Row{"device memory", "/memory/capacity_bytes", Unit::bytes, Better::neither},
    Row{"simulated tasks", "/simulated_tasks", Unit::count, Better::neither},
};

constexpr std::array kinds = {"tensor", "pipeline", "data", "expert", "context"};

double number_at(const Json& summary, std::string_view pointer) {
  const Json::json_pointer at{std::string(pointer)};
  if (!summary.contains(at) || !summary.at(at).is_number()) return std::nan("");
  return summary.at(at).get<double>();
}

std::string text_of(double v, Unit unit) {
  if (!std::isfinite(v)) return "&ndash;";
  switch (unit) {
  case Unit::seconds: return units::to_string(units::Seconds(v));
  case Unit::fraction: return fmt::format("{:.1f}%", 100 * v);
  case Unit::bytes: return units::to_string(units::Bytes(v));
  case Unit::flop_rate: return units::to_string(units::FlopRate(v));
  case Unit::count: return fmt::format("{:.0f}", v);
  }
  return "";
}

/// B - A (percentage points for fractions) and B / A, coloured by whether B improves on A.
std::string change_cells(double a, double b, Unit unit, Better better) {
  if (!std::isfinite(a) || !std::isfinite(b)) return "<td></td><td></td>";
  const double d = b - a;
  const std::string sign = d < 0 ? "&minus;" : "+";
  const std::string diff = unit == Unit::fraction ? fmt::format("{}{:.1f} pt", sign, 100 * std::fabs(d))
                           : unit == Unit::count  ? fmt::format("{}{:.0f}", sign, std::fabs(d))
                                                  : sign + text_of(std::fabs(d), unit);
  const std::string ratio = a != 0 ? fmt::format("{:.3f}x", b / a) : "&ndash;";
  const bool improved = better == Better::lower ? d < 0 : d > 0;
  const char* css = better == Better::neither || d == 0 ? "" : improved ? " better" : " worse";
  return fmt::format("<td class=\"n{}\">{}</td><td class=\"n{}\">{}</td>", css, diff, css, ratio);
}

void value_row(fmt::memory_buffer& out, const ComparedRun& a, const ComparedRun& b, const Row& row) {
  const double x = number_at(a.summary, row.pointer), y = number_at(b.summary, row.pointer);
  fmt::format_to(std::back_inserter(out), "<tr><th>{}</th><td class=\"n\">{}</td><td class=\"n\">{}</td>{}</tr>\n",
                 html_escape(row.label), text_of(x, row.unit), text_of(y, row.unit),
                 change_cells(x, y, row.unit, row.better));
}

void table_head(fmt::memory_buffer& out, const ComparedRun& a, const ComparedRun& b) {
  fmt::format_to(std::back_inserter(out),
                 "<table>\n<tr><th></th><th>A: {}</th><th>B: {}</th><th>B &minus; A</th>"
                 "<th>B / A</th></tr>\n",
                 html_escape(a.label), html_escape(b.label));
}

std::string text_at(const Json& summary, std::string_view pointer) {
  const Json::json_pointer at{std::string(pointer)};
  if (!summary.contains(at)) return "";
  const Json& v = summary.at(at);
  return v.is_string() ? v.get<std::string>() : v.dump();
}

/// "t 8 x p 8 x d 16, v 1, sequence, micro-batch 1 of 1536, recompute selective, 1f1b".
std::string plan_text(const Json& s) {
  std::string text = fmt::format("t {} x cp {} x p {} x d {}", text_at(s, "/plan/tensor"), text_at(s, "/plan/context"),
                                 text_at(s, "/plan/pipeline"), text_at(s, "/plan/data"));
  if (text_at(s, "/plan/virtual_stages") != "1") text += ", v " + text_at(s, "/plan/virtual_stages");
  if (text_at(s, "/plan/sequence") == "true") text += ", sequence parallel";
  return text + fmt::format(", micro-batch {} of {}, recompute {}, {}", text_at(s, "/plan/micro_batch"),
                            text_at(s, "/plan/global_batch"), text_at(s, "/plan/recompute"),
                            text_at(s, "/plan/pipeline_schedule"));
}

void scenario_table(fmt::memory_buffer& out, const ComparedRun& a, const ComparedRun& b) {
  auto o = std::back_inserter(out);
  fmt::format_to(o, "<h2>What each run is</h2>\n<table>\n<tr><th></th><th>A: {}</th><th>B: {}</th></tr>\n",
                 html_escape(a.label), html_escape(b.label));
  const auto row = [&](std::string_view label, const std::string& x, const std::string& y) {
    fmt::format_to(o, "<tr><th>{}</th><td>{}</td><td>{}</td></tr>\n", label, html_escape(x), html_escape(y));
  };
  row("workload", text_at(a.summary, "/workload"), text_at(b.summary, "/workload"));
  row("platform", text_at(a.summary, "/platform"), text_at(b.summary, "/platform"));
  row("devices", text_at(a.summary, "/world_size"), text_at(b.summary, "/world_size"));
  row("plan", plan_text(a.summary), plan_text(b.summary));
  row("folded", text_at(a.summary, "/approximations/folded"), text_at(b.summary, "/approximations/folded"));
  fmt::format_to(o, "</table>\n");
}

void breakdown_table(fmt::memory_buffer& out, const ComparedRun& a, const ComparedRun& b) {
  fmt::format_to(std::back_inserter(out), "<h2>Where the iteration's time goes</h2>\n");
  table_head(out, a, b);
  for (const Row& row :
       {Row{"compute", "/breakdown_s/compute", Unit::seconds, Better::lower},
        Row{"of which overlapped comm", "/breakdown_s/overlapped_comm", Unit::seconds, Better::neither},
        Row{"exposed comm", "/breakdown_s/exposed_comm", Unit::seconds, Better::lower},
        Row{"idle (bubbles, waiting)", "/breakdown_s/idle", Unit::seconds, Better::lower},
        Row{"waiting for the host", "/host_wait_s", Unit::seconds, Better::lower}})
    value_row(out, a, b, row);
  for (std::string_view what : {"exposed", "comm_busy"})
    for (const char* kind : kinds) {
      const std::string pointer = fmt::format("/{}_by_kind_s/{}", what == "exposed" ? "exposed_comm" : what, kind);
      const std::string label = fmt::format("{} comm, {}", what == "exposed" ? "exposed" : "busy", kind);
      if (number_at(a.summary, pointer) == 0 && number_at(b.summary, pointer) == 0) continue;
      value_row(out, a, b, Row{label, pointer, Unit::seconds, what == "exposed" ? Better::lower : Better::neither});
    }
  fmt::format_to(std::back_inserter(out), "</table>\n");
}

/// Each run's iteration as one bar on one time scale: compute, exposed communication by kind, idle.
void breakdown_bars(fmt::memory_buffer& out, const ComparedRun& a, const ComparedRun& b) {
  detail::StackedBars bars;
  bars.part_names = {"compute"};
  for (const char* kind : kinds) bars.part_names.push_back(fmt::format("exposed {} comm", kind));
  bars.part_names.emplace_back("idle");
  for (const ComparedRun* run : {&a, &b}) {
    std::vector<double> parts = {number_at(run->summary, "/breakdown_s/compute")};
    for (const char* kind : kinds)
      parts.push_back(number_at(run->summary, fmt::format("/exposed_comm_by_kind_s/{}", kind)));
    parts.push_back(number_at(run->summary, "/breakdown_s/idle"));
    for (double& p : parts) p = std::isfinite(p) ? p : 0;
    bars.labels.push_back(run->label);
    bars.tooltips.push_back(
        fmt::format("{}: {}", run->label, text_of(number_at(run->summary, "/iteration_time_s"), Unit::seconds)));
    bars.parts.push_back(std::move(parts));
  }
  detail::stacked_bar_chart(out, bars, false, "seconds per iteration");
}

void memory_table(fmt::memory_buffer& out, const ComparedRun& a, const ComparedRun& b) {
  const Json empty = Json::array();
  const Json& x = a.summary.contains("memory") ? a.summary["memory"].value("stages", empty) : empty;
  const Json& y = b.summary.contains("memory") ? b.summary["memory"].value("stages", empty) : empty;
  auto o = std::back_inserter(out);
  fmt::format_to(o, "<h2>Memory per pipeline stage (peak per device)</h2>\n");
  table_head(out, a, b);
  for (std::size_t s = 0; s < std::max(x.size(), y.size()); ++s) {
    const double p = s < x.size() ? x[s].value("total_bytes", std::nan("")) : std::nan("");
    const double q = s < y.size() ? y[s].value("total_bytes", std::nan("")) : std::nan("");
    fmt::format_to(o, "<tr><th>stage {}</th><td class=\"n\">{}</td><td class=\"n\">{}</td>{}</tr>\n", s,
                   text_of(p, Unit::bytes), text_of(q, Unit::bytes), change_cells(p, q, Unit::bytes, Better::lower));
  }
  fmt::format_to(o, "</table>\n");
}

/// Where byte `offset` of `text` is, 1-based.
SourceLocation location_of(const std::string& text, std::size_t offset, const std::string& file_name) {
  offset = std::min(offset, text.size());
  const auto before = text.begin() + static_cast<std::ptrdiff_t>(offset);
  const auto line = 1 + std::count(text.begin(), before, '\n');
  const std::size_t line_start = offset == 0 ? std::string::npos : text.rfind('\n', offset - 1);
  const std::size_t column = offset - (line_start == std::string::npos ? 0 : line_start + 1) + 1;
  return {file_name, static_cast<int>(line), static_cast<int>(column)};
}

ComparedRun parse_run_summary(const RunSummaryText& input) {
  Json summary;
  try {
    summary = Json::parse(input.text);
  } catch (const Json::parse_error& e) {
    InputError error(fmt::format("'{}' is not JSON: {}", input.file_name, e.what()), {},
                     "give a summary written by twocs run --json FILE");
    error.set_location(location_of(input.text, e.byte == 0 ? 0 : e.byte - 1, input.file_name));
    throw error;
  }
  for (const char* key : {"iteration_time_s", "breakdown_s", "exposed_comm_by_kind_s"})
    if (!summary.is_object() || !summary.contains(key)) {
      InputError error(fmt::format("'{}' is not a twocs run summary (no '{}')", input.file_name, key), {},
                       "give a summary written by twocs run --json FILE (a study's CSV goes to twocs report CSV)");
      error.set_location({input.file_name, 1, 1});
      throw error;
    }
  return {std::filesystem::path(input.file_name).filename().string(), std::move(summary)};
}

} // namespace

std::string compare_html(const RunSummaryText& a_text, const RunSummaryText& b_text) {
  const ComparedRun a = parse_run_summary(a_text);
  const ComparedRun b = parse_run_summary(b_text);
  fmt::memory_buffer out;
  auto o = std::back_inserter(out);
  const std::string title = fmt::format("twocs: {} vs {}", a.label, b.label);
  fmt::format_to(
      o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\n{}</head><body>\n",
      html_escape(title), style);
  fmt::format_to(o,
                 "<h1>{}</h1>\n<p>Two simulated iterations side by side; B &minus; A and B / A in green where B "
                 "improves on A, red where it is worse.</p>\n",
                 html_escape(title));
  scenario_table(out, a, b);
  fmt::format_to(o, "<h2>Headline</h2>\n");
  table_head(out, a, b);
  for (const Row& row : headline) value_row(out, a, b, row);
  fmt::format_to(o, "</table>\n");
  breakdown_table(out, a, b);
  breakdown_bars(out, a, b);
  memory_table(out, a, b);
  fmt::format_to(o, "</body></html>\n");
  return fmt::to_string(out);
}

} // namespace twocs::report
