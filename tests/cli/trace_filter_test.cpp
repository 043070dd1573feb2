// `twocs run --trace-devices/--trace-from/--trace-until`: the trace keeps what they select, and
// every bad value is bad input (exit 2) naming the flag, before anything is simulated.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_capture.hpp"
#include "cli/trace_options.hpp"

using namespace twocs::test; // contains, read_text, run_command_line, small_run, TempDir

TEST_CASE("--trace-devices keeps the listed devices' events and --trace-until the early ones") {
  TempDir dir("trace-filter");
  REQUIRE(
      run_command_line(small_run({"--quiet", "--json", dir.file("s.json"), "--trace", dir.file("all.json")})).code ==
      0);
  REQUIRE(run_command_line(small_run({"--quiet", "--trace", dir.file("d.json"), "--trace-devices", "1,3"})).code == 0);
  const double end = nlohmann::json::parse(read_text(dir.file("s.json")))["iteration_time_s"].get<double>();
  const std::string until = std::to_string(end / 2 * 1e3) + "ms";
  REQUIRE(run_command_line(small_run({"--quiet", "--trace", dir.file("w.json"), "--trace-until", until})).code == 0);
  std::size_t total = 0;
  std::size_t on_1_or_3 = 0;
  std::size_t early = 0;
  // Each parsed trace is kept in a variable: a range-for over a temporary's member dangles.
  const auto all = nlohmann::json::parse(read_text(dir.file("all.json")));
  for (const auto& e : all["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ++total;
    on_1_or_3 += e["pid"] == 1 || e["pid"] == 3 ? 1 : 0;
    early += e["ts"].get<double>() <= end / 2 * 1e6 ? 1 : 0;
  }
  std::size_t devices_kept = 0;
  std::set<int> pids;
  const auto by_device = nlohmann::json::parse(read_text(dir.file("d.json")));
  for (const auto& e : by_device["traceEvents"]) {
    pids.insert(e["pid"].get<int>());
    devices_kept += e["ph"] == "X" ? 1 : 0;
  }
  CHECK(devices_kept == on_1_or_3);
  CHECK(pids == std::set<int>{1, 3});
  std::size_t window_kept = 0;
  const auto window = nlohmann::json::parse(read_text(dir.file("w.json")));
  for (const auto& e : window["traceEvents"]) window_kept += e["ph"] == "X" ? 1 : 0;
  CHECK(window_kept > 0);
  CHECK(window_kept < total);
  CHECK(devices_kept < total);
  CHECK(window_kept >= early - 1); // ts is rounded to the nanosecond in the text
  CHECK(window_kept <= early + 1);
}

TEST_CASE("a bad --trace-devices, --trace-from or --trace-until is bad input naming the flag") {
  TempDir dir("trace-filter-bad");
  const std::string trace = dir.file("t.json");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--trace-devices", "7"}, "device 7 does not exist; the plan has 4 devices"},
      {{"--trace-devices", "2-1"}, "ends before it starts"},
      {{"--trace-devices", "0,x"}, "has 'x' where a device id belongs"},
      {{"--trace-devices", ""}, "where a device id belongs"},
      {{"--trace-from", "soon"}, "--trace-from: 'soon'"},
      {{"--trace-from=-1s"}, "before the iteration starts"},
      {{"--trace-from", "2s", "--trace-until", "1s"}, "is not after --trace-from"},
  };
  for (const auto& [flags, message] : cases) {
    std::vector<std::string> args{"--trace", trace};
    args.insert(args.end(), flags.begin(), flags.end());
    INFO(message);
    const auto r = run_command_line(small_run(args));
    CHECK(r.code == 2);
    CHECK(contains(r.err, message));
    CHECK(!std::filesystem::exists(trace));
  }
  // A filter without a trace to filter is a usage error too.
  const auto r = run_command_line(small_run({"--trace-devices", "0"}));
  CHECK(r.code == 2);
  CHECK(contains(r.err, "--trace"));
}

TEST_CASE("device_ranges writes runs of ids as ranges") {
  CHECK(twocs::cli::device_ranges({}).empty());
  CHECK(twocs::cli::device_ranges({4}) == "4");
  CHECK(twocs::cli::device_ranges({1, 2, 3, 5, 7, 8}) == "1-3, 5, 7-8");
  CHECK(twocs::cli::parse_trace_devices("7-8,1-3,5,2") == std::vector<twocs::lowering::DeviceId>{1, 2, 3, 5, 7, 8});
}
