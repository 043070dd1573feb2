// The Gantt chart of the HTML report: an inline SVG timeline of one device, one row per stream.
// Private to src/report.
#pragma once

#include <cstddef>
#include <string_view>

#include <twocs/engine/timeline.hpp>
#include <twocs/lowering/task_graph.hpp>

#include <twocs/fileio/chunked_writer.hpp>

namespace twocs::report::detail {

using fileio::ChunkedWriter;

/// Colour classes of the report's CSS (.k0 ... .k6), one per kind of task.
enum class TaskColour : std::uint8_t { forward, backward, recompute, optimizer, tensor, pipeline, data };
inline constexpr std::size_t task_colour_count = 7;

[[nodiscard]] TaskColour colour_of(const lowering::TaskGraph& graph, lowering::TaskId id);
[[nodiscard]] std::string_view colour_name(TaskColour colour); // "forward", "tensor comm", ...

/// Writes an <svg> with the tasks of `device` (compute kernels, and transfers it sends or
/// receives) on their stream rows. Tasks narrower than a pixel merge with their neighbours, and
/// at most `max_rects` rectangles are drawn, so the page stays small for any run.
void write_svg_timeline(ChunkedWriter& w, const lowering::TaskGraph& graph, const engine::Timeline& timeline,
                        lowering::DeviceId device, std::size_t max_rects = 50000);

} // namespace twocs::report::detail
