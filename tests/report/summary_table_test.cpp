#include <twocs/report/summary_table.hpp>

#include <sstream>
#include <string>

#include <doctest/doctest.h>

#include "report/report_fixtures.hpp"
#include "support/golden.hpp"

using twocs::report::summary_table;

namespace {

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

std::size_t widest_line(const std::string& text) {
  std::istringstream in(text);
  std::size_t widest = 0;
  for (std::string line; std::getline(in, line);) widest = std::max(widest, line.size());
  return widest;
}

} // namespace

TEST_SUITE("summary table") {
  TEST_CASE("summary table: names every figure") {
    const std::string t = summary_table(twocs::testing::tiny_summary());
    CHECK(has(t, "gpt-tiny on toy-cluster"));
    CHECK(has(t, "2 devices (measured on device 1)"));
    CHECK(has(t, "iteration time"));
    CHECK(has(t, "6.5 ms"));
    for (const char* row :
         {"compute", "overlapped comm", "exposed comm", "tensor", "pipeline", "data", "idle", "comm fraction",
          "exposed comm fraction", "model throughput", "MFU", "memory per device", "simulated tasks", "wall time"}) {
      INFO(row);
      CHECK(has(t, row));
    }
    CHECK(has(t, "53.8%")); // compute 3.5 ms of 6.5 ms
    CHECK(has(t, "15.4%")); // exposed comm 1 ms of 6.5 ms
    CHECK(has(t, "25.5%")); // comm fraction 1.2 / 4.7
    CHECK(has(t, "24.7%")); // MFU
    CHECK(has(t, "1,234,567"));
    CHECK(has(t, "fits"));
  }

  TEST_CASE("summary table: fits an 80-column terminal") {
    CHECK(widest_line(summary_table(twocs::testing::tiny_summary())) <= 80);
    auto big = twocs::testing::tiny_summary();
    big.workload_name = "gpt3-175b";
    big.platform_name = "dgx-a100-80gb";
    big.world_size = 1024;
    big.measured_device = 1023;
    big.iteration_time = twocs::units::seconds(13.75);
    big.breakdown.compute = twocs::units::seconds(9.1234);
    for (int i = 0; i < 12; ++i) big.memory.report.stages.push_back(twocs::testing::stage_memory(i % 4, 300.0));
    big.memory.peak = big.memory.report.stages[0].breakdown.total();
    CHECK(widest_line(summary_table(big)) <= 80);
  }

  TEST_CASE("summary table: per-stage memory lines only with more than one stage") {
    auto s = twocs::testing::tiny_summary();
    const std::string two = summary_table(s);
    CHECK(has(two, "per stage, in GiB"));
    CHECK(has(two, "weights"));
    s.memory.report.stages.resize(1);
    CHECK_FALSE(has(summary_table(s), "per stage"));
  }

  TEST_CASE("summary table: a plan that does not fit says so") {
    auto s = twocs::testing::tiny_summary();
    s.memory.fits = false;
    CHECK(has(summary_table(s), "DOES NOT FIT"));
  }

  TEST_CASE("summary table: an empty iteration prints without dividing by zero") {
    twocs::analysis::Summary s;
    const std::string t = summary_table(s);
    CHECK(has(t, "iteration time"));
    CHECK_FALSE(has(t, "nan"));
    CHECK_FALSE(has(t, "inf"));
  }

  TEST_CASE("summary table: golden") {
    twocs::testing::check_golden("summary_table_tiny.txt", summary_table(twocs::testing::tiny_summary()));
  }
}
