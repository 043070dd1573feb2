// The --report output: one self-contained HTML page (inline CSS and SVG, no scripts from
// elsewhere) with the summary, the time breakdown and a timeline of the measured device.
#pragma once

#include <ostream>

#include <twocs/analysis/summary.hpp>
#include <twocs/engine/timeline.hpp>
#include <twocs/lowering/task_graph.hpp>

namespace twocs::report {

void write_html_report(std::ostream& out, const analysis::Summary& summary, const lowering::TaskGraph& graph,
                       const engine::Timeline& timeline);

} // namespace twocs::report
