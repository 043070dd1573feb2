// The --trace output in Perfetto's protobuf format (`twocs run --trace FILE.pftrace`): the same
// slices as the Chrome trace (one per task), an order of magnitude smaller, plus counter tracks
// (trace_counters.hpp). Opens in ui.perfetto.dev; the schema subset it uses is
// tests/data/perfetto_trace_subset.proto.
//
// Layout: a track per device ("device 3"), under it a track per stream ("compute", "comm.tensor")
// and the device's counters; a "links" track holds the link counters. Tasks of one stream that
// overlap (transfers to several peers) go to sibling tracks of the same name, which the UI shows as
// one. Event names are interned (InternedData) on one packet sequence; the stream is the track.
#pragma once

#include <ostream>
#include <vector>

#include <twocs/engine/timeline.hpp>
#include <twocs/lowering/task_graph.hpp>
#include <twocs/report/chrome_trace.hpp>
#include <twocs/report/trace_counters.hpp>

namespace twocs::report {

void write_perfetto_trace(std::ostream& out, const lowering::TaskGraph& graph, const engine::Timeline& timeline,
                          const std::vector<CounterTrack>& counters, const TraceFilter& filter = {});

} // namespace twocs::report
