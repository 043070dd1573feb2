#include "html_timeline.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include <twocs/units/format.hpp>

#include <twocs/fileio/text_escape.hpp>

namespace twocs::report::detail {
using fileio::ChunkedWriter;
using fileio::html_escape;
namespace {

using lowering::TaskId;

constexpr double plot_width = 960.0;  // pixels for the whole iteration
constexpr double left_margin = 110.0; // row labels
constexpr double row_height = 26.0;
constexpr double bar_height = 20.0;
constexpr double axis_height = 24.0;
constexpr double min_width = 1.0;        // tasks narrower than this merge with their neighbours
constexpr double max_merged_width = 3.0; // a merged run stops growing at this width

struct Item {
  units::Seconds start;
  units::Seconds finish;
  TaskId id;
};

/// A run of tasks narrower than a pixel, drawn as one rectangle.
struct Merged {
  units::Seconds start;
  units::Seconds finish;
  std::size_t count = 0;
  std::array<double, task_colour_count> seconds_by_colour{};
};

class Chart {
public:
  Chart(ChunkedWriter& w, const lowering::TaskGraph& graph, units::Seconds span, lowering::DeviceId device,
        std::size_t max_rects)
      : w_(w), graph_(graph), scale_(plot_width / span.value()), device_(device), max_rects_(max_rects) {}

  void draw_row(int row, const std::vector<Item>& items);
  [[nodiscard]] bool truncated() const { return truncated_; }

private:
  [[nodiscard]] double x(units::Seconds t) const { return left_margin + t.value() * scale_; }
  [[nodiscard]] double y(int row) const { return static_cast<double>(row) * row_height + 2.0; }
  void rect(int row, units::Seconds start, units::Seconds finish, TaskColour colour, const std::string& tooltip);
  void flush(int row);
  [[nodiscard]] std::string tooltip(const Item& item) const;

  ChunkedWriter& w_;
  const lowering::TaskGraph& graph_;
  double scale_; // pixels per second
  lowering::DeviceId device_;
  std::size_t max_rects_;
  std::size_t rects_ = 0;
  bool truncated_ = false;
  Merged pending_;
};

void Chart::rect(int row, units::Seconds start, units::Seconds finish, TaskColour colour, const std::string& tooltip) {
  if (rects_ >= max_rects_) {
    truncated_ = true;
    return;
  }
  ++rects_;
  const double width = std::max(x(finish) - x(start), min_width);
  w_.format(R"(<rect class="k{}" x="{:.2f}" y="{:.2f}" width="{:.2f}" height="{:.0f}"><title>{}</title></rect>)",
            static_cast<int>(colour), x(start), y(row), width, bar_height, html_escape(tooltip));
  w_.append("\n");
  w_.end_record();
}

void Chart::flush(int row) {
  if (pending_.count == 0) return;
  const auto& by = pending_.seconds_by_colour;
  const auto colour = static_cast<TaskColour>(std::max_element(by.begin(), by.end()) - by.begin());
  rect(row, pending_.start, pending_.finish, colour,
       fmt::format("{} short tasks from {} to {} (each narrower than a pixel: merged)", pending_.count,
                   units::to_string(pending_.start), units::to_string(pending_.finish)));
  pending_ = Merged{};
}

std::string Chart::tooltip(const Item& item) const {
  const lowering::Task& t = graph_.task(item.id);
  std::string text = fmt::format("{} ({})\n{} to {}, {}", graph_.display_name(item.id), model::to_string(t.pass),
                                 units::to_string(item.start), units::to_string(item.finish),
                                 units::to_string(item.finish - item.start));
  if (t.is_transfer()) {
    const lowering::Transfer& x = graph_.transfer(item.id);
    const bool sends = t.device == device_;
    text += fmt::format("\n{} {} {}, {} comm", sends ? "send" : "receive", units::to_string(x.bytes),
                        sends ? fmt::format("to device {}", x.peer) : fmt::format("from device {}", t.device),
                        model::to_string(x.group));
  } else if (t.is_host()) {
    text += "\nthe host launching it";
  } else {
    const lowering::Kernel& k = graph_.kernel(item.id);
    text += fmt::format("\n{}, {}", units::to_string(k.flops), units::to_string(k.bytes));
  }
  return text;
}

void Chart::draw_row(int row, const std::vector<Item>& items) {
  for (const Item& item : items) {
    const TaskColour colour = colour_of(graph_, item.id);
    if (x(item.finish) - x(item.start) >= min_width) {
      flush(row);
      rect(row, item.start, item.finish, colour, tooltip(item));
      continue;
    }
    // A gap of a pixel, or a merged run growing past a few pixels, starts a new rectangle: at
    // most about one rectangle per pixel and row, whatever the number of tasks.
    if (pending_.count > 0 &&
        (x(item.start) > x(pending_.finish) + min_width || x(item.finish) - x(pending_.start) > max_merged_width))
      flush(row);
    if (pending_.count == 0) pending_.start = item.start;
    pending_.finish = units::max(pending_.finish, item.finish);
    pending_.seconds_by_colour[static_cast<std::size_t>(colour)] += (item.finish - item.start).value();
    ++pending_.count;
  }
  flush(row);
}

/// The tasks each stream row of `device` shows, in start order.
std::array<std::vector<Item>, lowering::stream_count>
rows_of(const lowering::TaskGraph& graph, const engine::Timeline& timeline, lowering::DeviceId device) {
  std::array<std::vector<Item>, lowering::stream_count> rows;
  const auto count = static_cast<TaskId>(std::min(graph.size(), timeline.tasks.size()));
  for (TaskId id = 0; id < count; ++id) {
    if (!graph.involves(id, device)) continue;
    rows[static_cast<std::size_t>(graph.stream(id))].push_back(
        {timeline.tasks[id].start, timeline.tasks[id].finish, id});
  }
  for (auto& row : rows)
    std::sort(row.begin(), row.end(),
              [](const Item& a, const Item& b) { return a.start < b.start || (a.start == b.start && a.id < b.id); });
  return rows;
}

/// Round tick spacing (1, 2 or 5 times a power of ten) giving at most ten ticks over `span`.
units::Seconds tick_step(units::Seconds span) {
  double step = std::pow(10.0, std::floor(std::log10(span.value() / 10.0)));
  for (const double factor : {1.0, 2.0, 5.0, 10.0}) {
    if (span.value() / (step * factor) <= 10.0) return units::seconds(step * factor);
  }
  return units::seconds(step * 10.0);
}

void write_axis(ChunkedWriter& w, units::Seconds span, double top) {
  const units::Seconds step = tick_step(span);
  const double scale = plot_width / span.value();
  for (int i = 0; step * i <= span * (1.0 + 1e-9); ++i) {
    const double px = left_margin + (step * i).value() * scale;
    w.format(R"(<line class="tick" x1="{0:.2f}" y1="0" x2="{0:.2f}" y2="{1:.2f}"/>)", px, top + 4.0);
    w.format(R"(<text class="axis" x="{:.2f}" y="{:.2f}">{}</text>)", px, top + 16.0,
             html_escape(units::to_string(step * i)));
    w.append("\n");
  }
}

units::Seconds span_of(const engine::Timeline& timeline) {
  units::Seconds span = timeline.makespan;
  for (const auto& t : timeline.tasks) span = units::max(span, t.finish);
  return span;
}

} // namespace

TaskColour colour_of(const lowering::TaskGraph& graph, lowering::TaskId id) {
  const lowering::Task& task = graph.task(id);
  if (task.is_transfer()) {
    switch (graph.transfer(id).group) {
    case model::CommGroup::tensor: return TaskColour::tensor;
    case model::CommGroup::pipeline: return TaskColour::pipeline;
    case model::CommGroup::data: return TaskColour::data;
    case model::CommGroup::expert: return TaskColour::data;    // shares data's colour; its own stream row
    case model::CommGroup::context: return TaskColour::tensor; // shares tensor's colour; its own stream row
    }
  }
  switch (task.pass) {
  case model::Pass::forward: return TaskColour::forward;
  case model::Pass::backward: return TaskColour::backward;
  case model::Pass::recompute: return TaskColour::recompute;
  case model::Pass::optimizer: return TaskColour::optimizer;
  }
  return TaskColour::forward;
}

std::string_view colour_name(TaskColour colour) {
  constexpr std::array<std::string_view, task_colour_count> names{
      "forward", "backward", "recompute", "optimizer", "tensor comm", "pipeline comm", "data comm"};
  return names[static_cast<std::size_t>(colour)];
}

void write_svg_timeline(ChunkedWriter& w, const lowering::TaskGraph& graph, const engine::Timeline& timeline,
                        lowering::DeviceId device, std::size_t max_rects) {
  const units::Seconds span = span_of(timeline);
  if (!(span.value() > 0.0) || !std::isfinite(span.value())) {
    w.append("<p>No timeline to draw: the iteration took no simulated time.</p>\n");
    return;
  }
  // The host's row only where its launches are modelled.
  const int shown_rows = graph.has_host_tasks() ? lowering::stream_count : lowering::stream_count - 1;
  const double top = shown_rows * row_height + 4.0;
  w.format(R"(<svg class="gantt" width="{:.0f}" height="{:.0f}" viewBox="0 0 {:.0f} {:.0f}" role="img">)",
           left_margin + plot_width + 40.0, top + axis_height, left_margin + plot_width + 40.0, top + axis_height);
  w.format("<title>Timeline of device {}</title>\n", device);
  write_axis(w, span, top);
  Chart chart(w, graph, span, device, max_rects);
  const auto rows = rows_of(graph, timeline, device);
  for (int row = 0; row < shown_rows; ++row) {
    w.format(R"(<text class="row" x="{:.2f}" y="{:.2f}">{}</text>)", left_margin - 8.0,
             static_cast<double>(row) * row_height + 2.0 + bar_height * 0.7,
             html_escape(lowering::to_string(lowering::all_streams[row])));
    w.append("\n");
    chart.draw_row(row, rows[static_cast<std::size_t>(row)]);
  }
  w.append("</svg>\n");
  if (chart.truncated())
    w.format(
        "<p class=\"note\">Only the first {} rectangles are drawn; the Chrome trace (--trace) has every task.</p>\n",
        max_rects);
}

} // namespace twocs::report::detail
