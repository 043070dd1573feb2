#include <twocs/report/html_report.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include <twocs/units/format.hpp>

#include "html_timeline.hpp"
#include <twocs/fileio/chunked_writer.hpp>
#include <twocs/fileio/text_escape.hpp>

namespace twocs::report {
namespace {

using fileio::ChunkedWriter;
using fileio::html_escape;

// Colours from the Tableau 10 palette; .k0-.k6 follow detail::TaskColour, .b0-.b5 the breakdown bar.
constexpr std::string_view style = R"(<style>
body { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
h2 { font-size: 1.15em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
p.sub, p.note { color: #666; }
table { border-collapse: collapse; }
td, th { padding: 2px 12px 2px 0; text-align: left; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.legend span { display: inline-block; margin-right: 1.2em; }
.legend i { display: inline-block; width: 0.9em; height: 0.9em; margin-right: 0.3em; vertical-align: -0.1em; }
svg text { font-size: 11px; fill: #333; }
svg text.row { text-anchor: end; }
svg text.axis { text-anchor: middle; fill: #666; }
svg line.tick { stroke: #e4e4e4; }
.k0 { fill: #4e79a7; background: #4e79a7; } .k1 { fill: #f28e2b; background: #f28e2b; }
.k2 { fill: #9c755f; background: #9c755f; } .k3 { fill: #bab0ac; background: #bab0ac; }
.k4 { fill: #e15759; background: #e15759; } .k5 { fill: #59a14f; background: #59a14f; }
.k6 { fill: #edc948; background: #edc948; }
.b0 { fill: #4e79a7; background: #4e79a7; } .b1 { fill: #76b7b2; background: #76b7b2; }
.b2 { fill: #e15759; background: #e15759; } .b3 { fill: #59a14f; background: #59a14f; }
.b4 { fill: #edc948; background: #edc948; } .b5 { fill: #eeeeee; background: #eeeeee; }
</style>
)";

std::string percent(double fraction) {
  return std::isfinite(fraction) ? fmt::format("{:.1f}%", 100.0 * fraction) : std::string("-");
}

std::string share(units::Seconds part, units::Seconds whole) {
  return whole.value() > 0.0 ? percent(part / whole) : std::string("-");
}

void figure(ChunkedWriter& w, std::string_view name, const std::string& value) {
  w.format("<tr><th>{}</th><td class=\"num\">{}</td></tr>\n", html_escape(name), html_escape(value));
}

void write_figures(ChunkedWriter& w, const analysis::Summary& s) {
  w.append("<h2>Summary</h2>\n<table>\n");
  figure(w, "iteration time", units::to_string(s.iteration_time));
  figure(w, "world size", fmt::format("{} devices", s.world_size));
  figure(w, "comm fraction", percent(s.comm_fraction));
  figure(w, "exposed comm fraction", percent(s.exposed_comm_fraction));
  figure(w, "model throughput per device", units::to_string(s.model_flops_per_device));
  figure(w, "MFU", percent(s.mfu));
  figure(w, "memory peak per device",
         fmt::format("{} of {} ({})", units::to_string(s.memory.peak), units::to_string(s.memory.capacity),
                     s.memory.fits ? "fits" : "does not fit"));
  figure(w, "simulated tasks", std::to_string(s.simulated_tasks));
  figure(w, "wall time", units::to_string(s.wall_time));
  w.append("</table>\n");
}

struct Segment {
  std::string_view name;
  units::Seconds time;
};

/// The iteration of the measured device cut into parts that add up to the iteration time.
std::array<Segment, 6> segments_of(const analysis::Summary& s) {
  const auto& b = s.breakdown;
  const auto& by = s.exposed_comm_by_group;
  using model::CommGroup;
  return {{{"compute, no comm", units::max(b.compute - b.overlapped_comm, units::Seconds(0.0))},
           {"compute + overlapped comm", b.overlapped_comm},
           {"exposed tensor comm", by[analysis::index(CommGroup::tensor)]},
           {"exposed pipeline comm", by[analysis::index(CommGroup::pipeline)]},
           {"exposed data comm", by[analysis::index(CommGroup::data)]},
           {"idle", b.idle}}};
}

void write_breakdown_bar(ChunkedWriter& w, const analysis::Summary& s) {
  w.format("<h2>Where the time of device {} goes</h2>\n", s.measured_device);
  const auto segments = segments_of(s);
  units::Seconds total;
  for (const auto& seg : segments) total += units::max(seg.time, units::Seconds(0.0));
  constexpr double width = 960.0;
  w.format(R"(<svg class="bar" width="{0:.0f}" height="28" viewBox="0 0 {0:.0f} 28" role="img">)", width);
  w.append("<title>Breakdown of the iteration time</title>\n");
  double x = 0.0;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const double part = total.value() > 0.0 ? units::max(segments[i].time, units::Seconds(0.0)) / total : 0.0;
    w.format(R"(<rect class="b{}" x="{:.2f}" y="0" width="{:.2f}" height="28"><title>{}: {} ({})</title></rect>)", i, x,
             part * width, html_escape(segments[i].name), html_escape(units::to_string(segments[i].time)),
             share(segments[i].time, s.iteration_time));
    w.append("\n");
    x += part * width;
  }
  w.append("</svg>\n<p class=\"legend\">");
  for (std::size_t i = 0; i < segments.size(); ++i)
    w.format("<span><i class=\"b{}\"></i>{} {} ({})</span>", i, html_escape(segments[i].name),
             html_escape(units::to_string(segments[i].time)), share(segments[i].time, s.iteration_time));
  w.append("</p>\n");
}

void write_memory(ChunkedWriter& w, const analysis::MemorySummary& m) {
  if (m.report.stages.empty()) return;
  w.append("<h2>Memory per device, by pipeline stage</h2>\n<table>\n<tr><th>stage</th><th class=\"num\">layers</th>"
           "<th class=\"num\">micro-batches in flight</th><th class=\"num\">weights</th>"
           "<th class=\"num\">gradients</th><th class=\"num\">optimizer state</th><th class=\"num\">activations</th>"
           "<th class=\"num\">comm buffers</th><th class=\"num\">total</th></tr>\n");
  for (const auto& st : m.report.stages) {
    const auto& b = st.breakdown;
    w.format("<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>", st.stage, st.layers,
             st.micro_batches_in_flight);
    for (const units::Bytes v :
         {b.weights, b.gradients, b.optimizer_state, b.activations, b.communication_buffers, b.total()})
      w.format("<td class=\"num\">{}</td>", html_escape(units::to_string(v)));
    w.append("</tr>\n");
  }
  w.append("</table>\n");
}

void write_timeline_legend(ChunkedWriter& w) {
  w.append("<p class=\"legend\">");
  for (std::size_t i = 0; i < detail::task_colour_count; ++i)
    w.format("<span><i class=\"k{}\"></i>{}</span>", i,
             html_escape(detail::colour_name(static_cast<detail::TaskColour>(i))));
  w.append("</p>\n");
}

} // namespace

void write_html_report(std::ostream& out, const analysis::Summary& summary, const lowering::TaskGraph& graph,
                       const engine::Timeline& timeline) {
  ChunkedWriter w(out);
  const std::string title = html_escape(fmt::format("twocs: {} on {}", summary.workload_name, summary.platform_name));
  w.format("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n", title);
  w.append(style);
  w.format("</head>\n<body>\n<h1>{}</h1>\n", title);
  w.format("<p class=\"sub\">One simulated training iteration on {} devices; the breakdown and the timeline are "
           "measured on device {}, the one that finishes last.</p>\n",
           summary.world_size, summary.measured_device);
  write_figures(w, summary);
  write_breakdown_bar(w, summary);
  write_memory(w, summary.memory);
  w.format("<h2>Timeline of device {}</h2>\n", summary.measured_device);
  write_timeline_legend(w);
  detail::write_svg_timeline(w, graph, timeline, summary.measured_device);
  w.append("<p class=\"note\">Hover a bar for its task. Transfers appear on the rows of both the sender and the "
           "receiver. The Chrome trace (--trace) holds every task of every device.</p>\n</body>\n</html>\n");
  w.flush();
}

} // namespace twocs::report
