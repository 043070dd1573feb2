// The --trace output: Chrome trace-event JSON (loads in Perfetto and chrome://tracing), one
// process per device, one thread per stream, one complete ("X") event per simulated task.
#pragma once

#include <ostream>

#include <twocs/engine/timeline.hpp>
#include <twocs/lowering/task_graph.hpp>

namespace twocs::report {

void write_chrome_trace(std::ostream& out, const lowering::TaskGraph& graph, const engine::Timeline& timeline);

} // namespace twocs::report
