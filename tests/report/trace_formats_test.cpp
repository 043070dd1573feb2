// The --trace formats chosen by extension: the gzipped JSON inflates (zlib) to the plain JSON
// byte for byte; the Perfetto trace, read back with a minimal wire-format reader, holds one slice
// per task and one counter track per counter (the JSON formats have none); each is deterministic.
#include <twocs/report/trace_format.hpp>

#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

#include <doctest/doctest.h>
#include <zlib.h>

#include "report/report_fixtures.hpp"

using twocs::report::CounterTrack;
using twocs::report::CounterUnit;
using twocs::report::TraceFormat;

namespace {

std::string written(TraceFormat format, const twocs::testing::TinyRun& run, const std::vector<CounterTrack>& counters) {
  std::ostringstream out;
  twocs::report::write_trace(out, format, run.graph, run.timeline, counters, {});
  return out.str();
}

std::string inflated(const std::string& gzipped) {
  z_stream z{};
  REQUIRE(inflateInit2(&z, 15 + 16) == Z_OK); // 15 + 16: gzip framing (zlib manual, inflateInit2)
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gzipped.data()));
  z.avail_in = static_cast<uInt>(gzipped.size());
  std::string out;
  int status = Z_OK;
  while (status == Z_OK) {
    char chunk[4096];
    z.next_out = reinterpret_cast<Bytef*>(chunk);
    z.avail_out = sizeof chunk;
    status = inflate(&z, Z_NO_FLUSH);
    out.append(chunk, sizeof chunk - z.avail_out);
  }
  inflateEnd(&z);
  CHECK(status == Z_STREAM_END);
  return out;
}

/// A minimal protobuf reader: the fields of one message, as (field, wire type, varint or bytes).
struct Field {
  std::uint32_t number = 0;
  std::uint64_t value = 0;
  std::string_view bytes;
};

std::uint64_t read_varint(std::string_view& in) {
  std::uint64_t value = 0;
  for (int shift = 0; !in.empty(); shift += 7) {
    const auto byte = static_cast<unsigned char>(in.front());
    in.remove_prefix(1);
    value |= std::uint64_t{byte & 0x7FU} << shift;
    if ((byte & 0x80U) == 0) return value;
  }
  throw std::runtime_error("truncated varint");
}

std::vector<Field> fields(std::string_view in) {
  std::vector<Field> out;
  while (!in.empty()) {
    const std::uint64_t key = read_varint(in);
    Field f{static_cast<std::uint32_t>(key >> 3), 0, {}};
    switch (key & 7) {
    case 0: f.value = read_varint(in); break;
    case 1: f.bytes = in.substr(0, 8), in.remove_prefix(8); break;
    case 2: {
      const auto size = read_varint(in);
      if (size > in.size()) throw std::runtime_error("truncated field");
      f.bytes = in.substr(0, size);
      in.remove_prefix(size);
      break;
    }
    default: throw std::runtime_error("unexpected wire type");
    }
    out.push_back(f);
  }
  return out;
}

struct Counts {
  std::size_t begins = 0, ends = 0, instants = 0, counter_values = 0, counter_tracks = 0, tracks = 0;
};

Counts count(const std::string& trace) {
  Counts c;
  for (const Field& packet : fields(trace)) {
    REQUIRE(packet.number == 1); // Trace.packet
    for (const Field& f : fields(packet.bytes)) {
      if (f.number == 60) { // TracePacket.track_descriptor
        ++c.tracks;
        for (const Field& d : fields(f.bytes)) c.counter_tracks += d.number == 8 ? 1 : 0; // .counter
      }
      if (f.number != 11) continue; // TracePacket.track_event
      for (const Field& e : fields(f.bytes)) {
        c.counter_values += e.number == 12 ? 1 : 0; // TrackEvent.extra_counter_values, on slice events
        if (e.number != 9) continue;                // TrackEvent.type
        c.begins += e.value == 1 ? 1 : 0;
        c.ends += e.value == 2 ? 1 : 0;
        c.instants += e.value == 3 ? 1 : 0;
        c.counter_values += e.value == 4 ? 1 : 0;
      }
    }
  }
  return c;
}

std::vector<CounterTrack> two_counters() {
  using twocs::units::Seconds;
  return {{"memory in use", CounterUnit::bytes, 0, {{Seconds(0), 1e9}, {Seconds(1e-3), 2e9}}},
          {"device 0 -> node switch", CounterUnit::percent, std::nullopt, {{Seconds(0), 0}, {Seconds(2e-3), 37.5}}}};
}

} // namespace

TEST_SUITE("trace formats") {
  TEST_CASE("trace formats: the extension names the format, and nothing else does") {
    using twocs::report::trace_format_of;
    CHECK(trace_format_of("out/run.json") == TraceFormat::chrome_json);
    CHECK(trace_format_of("run.json.gz") == TraceFormat::chrome_json_gzip);
    CHECK(trace_format_of("run.pftrace") == TraceFormat::perfetto);
    CHECK_FALSE(trace_format_of("run.txt").has_value());
    CHECK_FALSE(trace_format_of("run.gz").has_value());
    CHECK_FALSE(trace_format_of(".json").has_value()); // a name, not only an extension
  }

  TEST_CASE("trace formats: the gzipped trace inflates to the plain JSON byte for byte") {
    const auto run = twocs::testing::tiny_run();
    const std::string json = written(TraceFormat::chrome_json, run, two_counters());
    const std::string gzipped = written(TraceFormat::chrome_json_gzip, run, two_counters());
    REQUIRE(gzipped.size() > 18); // a gzip header and trailer at least (RFC 1952)
    CHECK(static_cast<unsigned char>(gzipped[0]) == 0x1F);
    CHECK(static_cast<unsigned char>(gzipped[1]) == 0x8B);
    CHECK(inflated(gzipped) == json);
    CHECK(written(TraceFormat::chrome_json_gzip, run, two_counters()) == gzipped);
  }

  TEST_CASE("trace formats: the Perfetto trace has one slice per task and one track per counter") {
    const auto run = twocs::testing::tiny_run();
    const std::string trace = written(TraceFormat::perfetto, run, two_counters());
    const Counts c = count(trace);
    CHECK(c.begins + c.instants == run.graph.size());
    CHECK(c.ends == c.begins);
    CHECK(c.counter_tracks == 2);
    CHECK(c.counter_values == 4); // in counter events, or riding on slice events at the same time
    // Tracks: two devices, their streams (tiny_run: each task on its own stream or lane) and the links group.
    CHECK(c.tracks >= 2 + 2 + 1);
    CHECK(written(TraceFormat::perfetto, run, two_counters()) == trace);
  }
}
