#include <twocs/report/trace_format.hpp>

#include <iterator>

#include <twocs/fileio/gzip_stream.hpp>
#include <twocs/report/perfetto_trace.hpp>

namespace twocs::report {

std::optional<TraceFormat> trace_format_of(const std::filesystem::path& file) {
  const std::string name = file.filename().string();
  const auto ends_with = [&](std::string_view suffix) { return name.size() > suffix.size() && name.ends_with(suffix); };
  if (ends_with(".json.gz")) return TraceFormat::chrome_json_gzip;
  if (ends_with(".json")) return TraceFormat::chrome_json;
  if (ends_with(".pftrace")) return TraceFormat::perfetto;
  return std::nullopt;
}

std::vector<CounterTrack> trace_counters(const lowering::TaskGraph& graph, const engine::Timeline& timeline,
                                         const platform::Topology& topology, const model::MemoryReport& memory,
                                         const model::Parallelism& parallelism, const TraceFilter& filter) {
  std::vector<CounterTrack> tracks = memory_tracks(graph, timeline, device_memory(memory, parallelism), filter);
  auto links = link_utilisation_tracks(graph, timeline, topology, filter);
  tracks.insert(tracks.end(), std::make_move_iterator(links.begin()), std::make_move_iterator(links.end()));
  return tracks;
}

void write_trace(std::ostream& out, TraceFormat format, const lowering::TaskGraph& graph,
                 const engine::Timeline& timeline, const std::vector<CounterTrack>& counters,
                 const TraceFilter& filter) {
  switch (format) {
  // The JSON formats leave the counters out: on GPT-3 175B's trace they would add a third (72 MB).
  case TraceFormat::chrome_json: write_chrome_trace(out, graph, timeline, filter); return;
  case TraceFormat::chrome_json_gzip:
    fileio::write_gzipped(out, [&](std::ostream& json) { write_chrome_trace(json, graph, timeline, filter); });
    return;
  case TraceFormat::perfetto: write_perfetto_trace(out, graph, timeline, counters, filter); return;
  }
}

} // namespace twocs::report
