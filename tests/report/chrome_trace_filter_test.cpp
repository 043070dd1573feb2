// The Chrome trace's filter (--trace-devices, --trace-from, --trace-until): which events and
// process records a device list and a time window keep, counted independently from the timeline.
#include <twocs/report/chrome_trace.hpp>

#include <set>
#include <sstream>
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "report/report_fixtures.hpp"

using nlohmann::json;
using twocs::lowering::DeviceId;
using twocs::lowering::TaskId;
using twocs::report::TraceFilter;
using twocs::units::Seconds;

namespace {

struct Written {
  std::size_t events = 0;
  std::set<int> event_pids;
  std::set<int> process_pids; // process_name records
};

Written written(const twocs::testing::TinyRun& run, const TraceFilter& filter) {
  std::ostringstream out;
  twocs::report::write_chrome_trace(out, run.graph, run.timeline, filter);
  Written w;
  const json trace = json::parse(out.str()); // kept: a range-for over a temporary's member dangles
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") == "X") {
      ++w.events;
      w.event_pids.insert(e.at("pid").get<int>());
    } else if (e.at("name") == "process_name") {
      w.process_pids.insert(e.at("pid").get<int>());
    }
  }
  return w;
}

} // namespace

TEST_SUITE("chrome trace") {
  TEST_CASE("chrome trace filter: a device list keeps those devices' processes and events only") {
    const auto run = twocs::testing::tiny_run();
    REQUIRE(run.graph.device_count() >= 2);
    const DeviceId kept = 1;
    std::size_t expected = 0;
    for (TaskId id = 0; id < run.graph.size(); ++id) expected += run.graph.task(id).device == kept ? 1 : 0;
    REQUIRE(expected > 0);
    const Written w = written(run, TraceFilter{std::vector<DeviceId>{kept}, Seconds(0), std::nullopt});
    CHECK(w.events == expected);
    CHECK(w.event_pids == std::set<int>{kept});
    CHECK(w.process_pids == std::set<int>{kept});
  }

  TEST_CASE("chrome trace filter: a window keeps every task that overlaps it, whole") {
    const auto run = twocs::testing::tiny_run();
    double end = 0;
    for (const auto& t : run.timeline.tasks) end = std::max(end, t.finish.value());
    const Seconds from(end / 3);
    const Seconds until(end / 2);
    std::size_t expected = 0;
    for (const auto& t : run.timeline.tasks)
      expected += t.finish.value() >= from.value() && t.start.value() <= until.value() ? 1 : 0;
    REQUIRE(expected > 0);
    REQUIRE(expected < run.graph.size());
    CHECK(written(run, TraceFilter{std::nullopt, from, until}).events == expected);
    // No filter keeps everything; a window past the end keeps nothing but the process records.
    CHECK(written(run, TraceFilter{}).events == run.graph.size());
    const Written none = written(run, TraceFilter{std::nullopt, Seconds(end * 2), std::nullopt});
    CHECK(none.events == 0);
    CHECK(none.process_pids.size() == static_cast<std::size_t>(run.graph.device_count()));
  }
}
