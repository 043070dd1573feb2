#include "study_charts.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>

#include <twocs/fileio/text_escape.hpp>

namespace twocs::report::detail {
namespace {

using fileio::html_escape;

// Colour-blind-safe palette (Okabe and Ito, "Color Universal Design", 2008).
constexpr std::array<std::string_view, 7> palette = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                                     "#E69F00", "#56B4E9", "#999999"};
constexpr double plot_height = 220, margin_left = 56, margin_top = 12;
// Every chart is drawn in a viewBox this wide and scaled to the page's width (CSS), so that a
// chart of three bars fills the page as one of three hundred does; a chart whose bars or
// categories would be thinner than their minimum gets a wider viewBox.
constexpr double chart_width = 900, margin_right = 10;

/// The step between bars or categories that fills the chart's width, at least `minimum`.
double step_for(std::size_t count, double minimum) {
  return std::max(minimum,
                  (chart_width - margin_left - margin_right) / static_cast<double>(std::max<std::size_t>(1, count)));
}

void open_svg(fmt::memory_buffer& out, double width, double height) {
  fmt::format_to(std::back_inserter(out),
                 "<svg class=\"chart\" viewBox=\"0 0 {:.0f} {:.0f}\" preserveAspectRatio=\"xMinYMin meet\" "
                 "role=\"img\" overflow=\"visible\">",
                 width, height);
}

void legend(fmt::memory_buffer& out, const std::vector<std::string>& names) {
  fmt::format_to(std::back_inserter(out), "<div class=\"legend\">");
  for (std::size_t i = 0; i < names.size(); ++i)
    fmt::format_to(std::back_inserter(out), "<span><i style=\"background:{}\"></i>{}</span>",
                   palette[i % palette.size()], html_escape(names[i]));
  fmt::format_to(std::back_inserter(out), "</div>\n");
}

void y_axis(fmt::memory_buffer& out, double width, double top_value, const std::string& label, bool percent) {
  auto o = std::back_inserter(out);
  for (int tick = 0; tick <= 4; ++tick) {
    const double y = margin_top + plot_height * (1 - tick / 4.0);
    const double v = top_value * tick / 4.0;
    fmt::format_to(o, "<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>", margin_left,
                   width, y, y);
    fmt::format_to(o, "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>", margin_left - 4, y + 4,
                   percent ? fmt::format("{:.0f}%", v * 100) : fmt::format("{:.3g}", v));
  }
  fmt::format_to(o, "<text x=\"12\" y=\"{:.1f}\" transform=\"rotate(-90 12 {:.1f})\" text-anchor=\"middle\">{}</text>",
                 margin_top + plot_height / 2, margin_top + plot_height / 2, html_escape(label));
}

/// Height below the plot: x labels of up to 24 characters at 45 degrees (about 6.2 px a character
/// at 11 px, sin 45 = 0.71), and the axis title.
double margin_bottom_for(const std::vector<std::string>& labels) {
  std::size_t longest = 0;
  for (const auto& l : labels) longest = std::max(longest, std::min<std::size_t>(l.size(), 24));
  return 36 + 4.4 * static_cast<double>(longest);
}

void x_label(fmt::memory_buffer& out, double x, const std::string& text) {
  const double y = margin_top + plot_height + 10;
  fmt::format_to(
      std::back_inserter(out),
      "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" transform=\"rotate(-45 {:.1f} {:.1f})\">{}</text>", x, y, x,
      y, html_escape(text.size() > 24 ? text.substr(0, 23) + "…" : text));
}

/// A bar part's hover text: the bar's label, the part's name, its value and its share of the bar.
std::string part_tooltip(const StackedBars& bars, std::size_t b, std::size_t p, double sum) {
  const double v = bars.parts[b][p];
  std::string text = fmt::format("{}: {} {:.4g}{}", bars.labels[b], bars.part_names[p], v, bars.unit);
  if (bars.parts[b].size() > 1 && sum > 0 && std::isfinite(v)) text += fmt::format(" ({:.1f}%)", 100 * v / sum);
  return text;
}

} // namespace

double cell_number(const std::string& cell) {
  double v = 0;
  auto [ptr, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), v);
  if (cell.empty() || ec != std::errc() || ptr != cell.data() + cell.size())
    return std::numeric_limits<double>::quiet_NaN();
  return v;
}

void stacked_bar_chart(fmt::memory_buffer& out, const StackedBars& bars, bool normalise, const std::string& y_label) {
  const double step = step_for(bars.labels.size(), 6.0);
  const double width = margin_left + step * static_cast<double>(bars.labels.size()) + margin_right;
  const double bar = std::min(step * 0.8, 72.0);
  double top = 0;
  for (const auto& p : bars.parts) {
    double sum = 0;
    for (double v : p) sum += std::isfinite(v) ? v : 0;
    top = std::max(top, sum);
  }
  if (normalise || top <= 0) top = 1;
  auto o = std::back_inserter(out);
  open_svg(out, width, margin_top + plot_height + margin_bottom_for(bars.labels));
  y_axis(out, width, top, y_label, normalise);
  for (std::size_t b = 0; b < bars.parts.size(); ++b) {
    double sum = 0;
    for (double v : bars.parts[b]) sum += std::isfinite(v) ? v : 0;
    const double scale = normalise ? (sum > 0 ? 1 / sum : 0) : 1 / top;
    const double x = margin_left + step * (static_cast<double>(b) + 0.5) - bar / 2;
    double y = margin_top + plot_height;
    fmt::format_to(o, "<g><title>{}</title>", html_escape(bars.tooltips[b]));
    for (std::size_t p = 0; p < bars.parts[b].size(); ++p) {
      const double v = std::isfinite(bars.parts[b][p]) ? bars.parts[b][p] : 0;
      const double h = plot_height * v * scale;
      y -= h;
      fmt::format_to(
          o, "<rect x=\"{:.1f}\" y=\"{:.2f}\" width=\"{:.1f}\" height=\"{:.2f}\" fill=\"{}\"><title>{}</title></rect>",
          x, y, bar, h, palette[p % palette.size()], html_escape(part_tooltip(bars, b, p, sum)));
    }
    fmt::format_to(o, "</g>");
    x_label(out, x + bar / 2, bars.labels[b]);
  }
  fmt::format_to(o, "</svg>\n");
  legend(out, bars.part_names);
}

void scatter_chart(fmt::memory_buffer& out, const Scatter& chart) {
  const double step = step_for(chart.categories.size(), 24.0);
  const double width = margin_left + step * static_cast<double>(chart.categories.size()) + margin_right;
  double top = 0;
  for (const auto& series : chart.points)
    for (const auto& [c, y] : series) top = std::max(top, y);
  top = top <= 0 ? 1 : top <= 1 ? 1 : std::ceil(top);
  const double margin_bottom = margin_bottom_for(chart.categories);
  auto o = std::back_inserter(out);
  open_svg(out, width, margin_top + plot_height + margin_bottom);
  y_axis(out, width, top, chart.y_label, top == 1);
  const auto px = [&](std::size_t c) { return margin_left + step * (static_cast<double>(c) + 0.5); };
  const auto py = [&](double y) { return margin_top + plot_height * (1 - y / top); };
  for (std::size_t c = 0; c < chart.categories.size(); ++c) x_label(out, px(c), chart.categories[c]);
  for (std::size_t s = 0; s < chart.points.size(); ++s) {
    const std::string_view colour = palette[s % palette.size()];
    std::vector<double> sum(chart.categories.size()), count(chart.categories.size());
    for (const auto& [c, y] : chart.points[s]) {
      sum[c] += y;
      count[c] += 1;
      fmt::format_to(o,
                     "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\" fill-opacity=\"0.6\"><title>{}, {} "
                     "{}: {:.4g}</title></circle>",
                     px(c), py(y), colour, html_escape(chart.series_names[s]), html_escape(chart.x_label),
                     html_escape(chart.categories[c]), y);
    }
    std::string path;
    for (std::size_t c = 0; c < sum.size(); ++c)
      if (count[c] > 0) path += fmt::format("{}{:.1f},{:.1f} ", path.empty() ? "M" : "L", px(c), py(sum[c] / count[c]));
    if (!path.empty())
      fmt::format_to(
          o, "<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"><title>{}: mean per {}</title></path>",
          path, colour, html_escape(chart.series_names[s]), html_escape(chart.x_label));
  }
  fmt::format_to(o, "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text></svg>\n", width / 2,
                 margin_top + plot_height + margin_bottom - 4, html_escape(chart.x_label));
  legend(out, chart.series_names);
}

} // namespace twocs::report::detail
