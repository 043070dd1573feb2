// `twocs run --trace FILE`: the format follows FILE's extension. .json: Chrome trace-event JSON
// (chrome_trace.hpp); .json.gz: the same JSON gzipped; .pftrace: Perfetto's protobuf trace
// (perfetto_trace.hpp), the only one with the counter tracks (trace_counters.hpp).
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <string_view>
#include <vector>

#include <twocs/engine/timeline.hpp>
#include <twocs/lowering/task_graph.hpp>
#include <twocs/model/memory.hpp>
#include <twocs/model/training_plan.hpp>
#include <twocs/platform/topology.hpp>
#include <twocs/report/chrome_trace.hpp>
#include <twocs/report/trace_counters.hpp>

namespace twocs::report {

enum class TraceFormat { chrome_json, chrome_json_gzip, perfetto };

/// The extensions --trace accepts, as messages list them.
inline constexpr std::string_view trace_extensions =
    ".json (Chrome JSON), .json.gz (gzipped JSON), .pftrace (Perfetto)";

/// The format FILE's name asks for; none for any other extension.
[[nodiscard]] std::optional<TraceFormat> trace_format_of(const std::filesystem::path& file);

/// Every counter track of a run: memory in use per device, then link utilisation.
[[nodiscard]] std::vector<CounterTrack>
trace_counters(const lowering::TaskGraph& graph, const engine::Timeline& timeline, const platform::Topology& topology,
               const model::MemoryReport& memory, const model::Parallelism& parallelism, const TraceFilter& filter);

/// Writes the trace in `format`; `counters` go into the Perfetto trace only.
void write_trace(std::ostream& out, TraceFormat format, const lowering::TaskGraph& graph,
                 const engine::Timeline& timeline, const std::vector<CounterTrack>& counters,
                 const TraceFilter& filter);

} // namespace twocs::report
