#include <twocs/report/html_report.hpp>

#include <sstream>
#include <string>

#include <doctest/doctest.h>

#include "report/report_fixtures.hpp"

namespace {

std::string report(const twocs::analysis::Summary& s, const twocs::testing::TinyRun& run) {
  std::ostringstream out;
  twocs::report::write_html_report(out, s, run.graph, run.timeline);
  return out.str();
}

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

} // namespace

TEST_SUITE("html report") {
  TEST_CASE("html report: a self-contained page with the figures and two charts") {
    const std::string page = report(twocs::testing::tiny_summary(), twocs::testing::tiny_run());
    CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
    CHECK(has(page, "</html>"));
    CHECK_FALSE(has(page, "http"));
    CHECK_FALSE(has(page, "src="));
    CHECK_FALSE(has(page, "<script"));
    CHECK_FALSE(has(page, "<link"));
    CHECK(occurrences(page, "<svg") == 2);
    CHECK(has(page, "gpt-tiny on toy-cluster"));
    CHECK(has(page, "6.5 ms"));
    CHECK(has(page, "Timeline of device 1"));
  }

  TEST_CASE("html report: the timeline shows the measured device's tasks and transfers both ways") {
    const std::string page = report(twocs::testing::tiny_summary(), twocs::testing::tiny_run());
    // Device 1 computes mlp.fc1 and its dgrad, receives the tensor and pipeline transfers and sends
    // the data-parallel one: five rectangles with tooltips, plus six in the breakdown bar.
    CHECK(occurrences(page, "<rect") == 5 + 6);
    CHECK(has(page, "<title>mlp.fc1 L1 mb0 (forward)"));
    CHECK(has(page, "receive 16 MiB from device 0, pipeline comm"));
    CHECK(has(page, "send 8 MiB to device 0, data comm"));
    CHECK_FALSE(has(page, "attn.qkv L0")); // a task of device 0 only
  }

  TEST_CASE("html report: text is escaped") {
    auto run = twocs::testing::tiny_run();
    twocs::testing::add(run,
                        {twocs::lowering::TaskKind::compute, twocs::lowering::Stream::compute,
                         twocs::model::Pass::backward, 1, -1, 3, 0, -1, -1, "weird<&>op", 1e-3, 1, 1, 5.5e-3, 6.5e-3});
    auto s = twocs::testing::tiny_summary();
    s.workload_name = "<script>alert('x')</script>";
    const std::string page = report(s, run);
    CHECK(has(page, "weird&lt;&amp;&gt;op"));
    CHECK_FALSE(has(page, "weird<&>op"));
    CHECK_FALSE(has(page, "<script"));
    CHECK(has(page, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"));
  }

  TEST_CASE("html report: huge runs stay small") {
    twocs::testing::TinyRun run{twocs::lowering::TaskGraph(2), {}};
    constexpr int count = 200000;
    for (int i = 0; i < count; ++i) {
      const double start = i * 1e-6;
      twocs::testing::add(run, {twocs::lowering::TaskKind::compute, twocs::lowering::Stream::compute,
                                i % 2 == 0 ? twocs::model::Pass::forward : twocs::model::Pass::backward, 0, -1, i % 96,
                                i % 8, -1, -1, "mlp.fc2", 1e-6, 1e9, 1e6, start, start + 0.9e-6});
    }
    auto s = twocs::testing::tiny_summary();
    s.measured_device = 0;
    const std::string page = report(s, run);
    CHECK(occurrences(page, "<rect") < 2000);
    CHECK(page.size() < 1000000);
    CHECK(has(page, "short tasks from"));
  }

  TEST_CASE("html report: an empty timeline still gives a page") {
    const twocs::testing::TinyRun run{twocs::lowering::TaskGraph(1), {}};
    const std::string page = report(twocs::analysis::Summary{}, run);
    CHECK(has(page, "No timeline to draw"));
    CHECK(has(page, "</html>"));
  }
}
