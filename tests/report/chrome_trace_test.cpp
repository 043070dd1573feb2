#include <twocs/report/chrome_trace.hpp>

#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "report/report_fixtures.hpp"
#include "support/golden.hpp"

using nlohmann::json;
using twocs::lowering::TaskId;

namespace {

std::string trace_text(const twocs::testing::TinyRun& run) {
  std::ostringstream out;
  twocs::report::write_chrome_trace(out, run.graph, run.timeline);
  return out.str();
}

} // namespace

TEST_SUITE("chrome trace") {
  TEST_CASE("chrome trace: exactly one complete event per task, in task order") {
    const auto run = twocs::testing::tiny_run();
    const json j = json::parse(trace_text(run));
    CHECK(j.at("displayTimeUnit") == "ms");
    std::vector<json> events;
    for (const auto& e : j.at("traceEvents"))
      if (e.at("ph") == "X") events.push_back(e);
    REQUIRE(events.size() == run.graph.size());
    for (TaskId id = 0; id < run.graph.size(); ++id) {
      const auto& e = events[id];
      const auto& t = run.graph.task(id);
      INFO("task " << id);
      CHECK(e["name"] == run.graph.display_name(id));
      CHECK(e["pid"] == t.device);
      CHECK(e["tid"] == static_cast<int>(run.graph.stream(id)));
      CHECK(e["ts"].get<double>() == doctest::Approx(run.timeline.tasks[id].start.value() * 1e6).epsilon(1e-9));
      const double dur = (run.timeline.tasks[id].finish - run.timeline.tasks[id].start).value() * 1e6;
      CHECK(std::abs(e["dur"].get<double>() - dur) < 1e-3);
      CHECK(e["args"]["label"] == run.graph.label_of(id));
      CHECK(e["args"]["layer"] == t.layer);
      CHECK(e["args"]["micro_batch"] == t.micro_batch);
      CHECK(e["args"]["pass"] == std::string(twocs::model::to_string(t.pass)));
      if (t.is_transfer()) {
        const auto& x = run.graph.transfer(id);
        CHECK(e["args"]["flops"].get<double>() == 0.0);
        CHECK(e["args"]["bytes"].get<double>() == x.bytes.value());
        CHECK(e["cat"] == "comm." + std::string(twocs::model::to_string(x.group)));
        CHECK(e["args"]["peer"] == x.peer);
        CHECK(e["args"]["collective"] == x.collective);
        CHECK(e["args"]["step"] == x.step);
      } else {
        const auto& k = run.graph.kernel(id);
        CHECK(e["args"]["flops"].get<double>() == k.flops.value());
        CHECK(e["args"]["bytes"].get<double>() == k.bytes.value());
        CHECK(e["cat"] == "compute");
        CHECK_FALSE(e["args"].contains("peer"));
      }
    }
  }

  TEST_CASE("chrome trace: one process per device and one thread per stream, named and sorted") {
    const auto run = twocs::testing::tiny_run();
    const json j = json::parse(trace_text(run));
    std::map<int, std::string> processes;
    std::set<int> process_sorted;
    std::map<std::pair<int, int>, std::string> threads;
    std::set<std::pair<int, int>> thread_sorted;
    for (const auto& e : j["traceEvents"]) {
      if (e["ph"] != "M") continue;
      const int pid = e["pid"];
      const int tid = e["tid"];
      if (e["name"] == "process_name") processes[pid] = e["args"]["name"];
      if (e["name"] == "process_sort_index") process_sorted.insert(pid);
      if (e["name"] == "thread_name") threads[{pid, tid}] = e["args"]["name"];
      if (e["name"] == "thread_sort_index") thread_sorted.insert({pid, tid});
    }
    CHECK(processes == std::map<int, std::string>{{0, "device 0"}, {1, "device 1"}});
    CHECK(process_sorted.size() == 2);
    CHECK(threads.size() == 12); // 2 devices x 6 streams
    CHECK(thread_sorted.size() == 12);
    CHECK(threads[{1, 0}] == "compute");
    CHECK(threads[{0, 1}] == "comm.tensor");
    CHECK(threads[{0, 2}] == "comm.pipeline");
    CHECK(threads[{1, 3}] == "comm.data");
    CHECK(threads[{1, 4}] == "comm.expert");
    CHECK(threads[{0, 5}] == "comm.context");
  }

  TEST_CASE("chrome trace: the host's launches get a thread of their own, only where they are modelled") {
    auto run = twocs::testing::tiny_run();
    const auto threads = [](const json& j) {
      std::set<std::pair<int, std::string>> names;
      for (const auto& e : j["traceEvents"])
        if (e["name"] == "thread_name") names.insert({e["tid"].get<int>(), e["args"]["name"].get<std::string>()});
      return names;
    };
    CHECK(threads(json::parse(trace_text(run))).count({6, "host"}) == 0);
    const twocs::lowering::TaskTag tag{twocs::model::Pass::forward, 0, 0, run.graph.intern_label("attn.qkv")};
    (void)run.graph.add_host_launch(1, tag, twocs::units::seconds(13.5e-6));
    run.timeline.tasks.push_back({twocs::units::seconds(0), twocs::units::seconds(13.5e-6)});
    const json j = json::parse(trace_text(run));
    CHECK(threads(j).count({6, "host"}) == 1);
    const json& launch = j["traceEvents"].back();
    CHECK(launch["cat"] == "host");
    CHECK(launch["tid"] == 6);
    CHECK(launch["pid"] == 1);
    CHECK(launch["args"]["label"] == "attn.qkv");
    CHECK(launch["dur"].get<double>() == doctest::Approx(13.5));
  }

  TEST_CASE("chrome trace: deterministic and golden") {
    const auto run = twocs::testing::tiny_run();
    const std::string text = trace_text(run);
    CHECK(text == trace_text(run));
    twocs::testing::check_golden("trace_tiny.json", text);
  }

  TEST_CASE("chrome trace: labels are escaped") {
    auto run = twocs::testing::tiny_run();
    const std::string odd = "odd \"label\" with \\ and\ttab\x01";
    twocs::testing::add(run, {twocs::lowering::TaskKind::compute, twocs::lowering::Stream::compute,
                              twocs::model::Pass::forward, 1, -1, 2, 0, -1, -1, odd.c_str(), 1e-6, 1, 1, 6e-3, 6.1e-3});
    const json j = json::parse(trace_text(run));
    CHECK(j["traceEvents"].back()["args"]["label"] == odd);
  }

  TEST_CASE("chrome trace: an empty graph is valid JSON") {
    const twocs::lowering::TaskGraph graph(0);
    std::ostringstream out;
    twocs::report::write_chrome_trace(out, graph, {});
    const json j = json::parse(out.str());
    CHECK(j["traceEvents"].empty());
  }

  TEST_CASE("chrome trace: a timeline of another graph is refused") {
    const auto run = twocs::testing::tiny_run();
    std::ostringstream out;
    CHECK_THROWS_AS(twocs::report::write_chrome_trace(out, run.graph, {}), std::logic_error);
  }

  TEST_CASE("chrome trace: large graphs stream through in chunks") {
    twocs::testing::TinyRun run{twocs::lowering::TaskGraph(4), {}};
    constexpr int count = 20000; // about 5 MB of trace: several 1 MiB chunks
    for (int i = 0; i < count; ++i) {
      const double start = i * 1e-6;
      twocs::testing::add(run, {twocs::lowering::TaskKind::compute, twocs::lowering::Stream::compute,
                                twocs::model::Pass::forward, i % 4, -1, i % 96, i % 8, -1, -1, "mlp.fc2", 1e-6, 1e9,
                                1e6, start, start + 1e-6});
    }
    const std::string text = [&] {
      std::ostringstream out;
      twocs::report::write_chrome_trace(out, run.graph, run.timeline);
      return out.str();
    }();
    const json j = json::parse(text);
    std::size_t complete = 0;
    for (const auto& e : j["traceEvents"]) complete += e["ph"] == "X" ? 1 : 0;
    CHECK(complete == count);
  }
}
