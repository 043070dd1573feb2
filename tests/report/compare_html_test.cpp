// `twocs report --compare`: two run summaries side by side (interface.md, "Added for the next round").
#include <doctest/doctest.h>

#include <string>

#include <fmt/format.h>

#include <twocs/error.hpp>
#include <twocs/report/compare_html.hpp>

using twocs::report::compare_html;
using twocs::report::RunSummaryText;

namespace {

/// A summary with the fields the page reads; times in seconds.
std::string summary(double iteration, double compute, double exposed_data, double mfu, double peak_bytes) {
  return fmt::format(
      R"({{"workload": "gpt3-13b", "platform": "dgx-a100-80gb", "world_size": 16, "iteration_time_s": {},
  "breakdown_s": {{"compute": {}, "exposed_comm": {}, "overlapped_comm": 0.1, "idle": 0}},
  "exposed_comm_by_kind_s": {{"tensor": 0, "pipeline": 0, "data": {}, "expert": 0, "context": 0}},
  "comm_busy_by_kind_s": {{"tensor": 0, "pipeline": 0, "data": 0.5, "expert": 0, "context": 0}},
  "mfu": {}, "comm_fraction": 0.3, "exposed_comm_fraction": 0.2,
  "memory": {{"peak_bytes": {}, "capacity_bytes": 85899345920, "stages": [{{"stage": 0, "total_bytes": {}}}]}},
  "plan": {{"tensor": 8, "context": 1, "pipeline": 1, "data": 2, "virtual_stages": 1, "sequence": false,
           "micro_batch": 2, "global_batch": 16, "recompute": "none", "pipeline_schedule": "1f1b"}}}})",
      iteration, compute, exposed_data, exposed_data, mfu, peak_bytes, peak_bytes);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

} // namespace

TEST_CASE("compare: each run's numbers, B - A and B / A, coloured by which is better") {
  const std::string page = compare_html({"runs/before.json", summary(1.25, 1.0, 0.25, 0.40, 40 * 1073741824.0)},
                                        {"runs/after.json", summary(1.0, 1.0, 0.0, 0.50, 40 * 1073741824.0)});
  CHECK(contains(page, "<title>twocs: before.json vs after.json</title>"));
  CHECK(contains(page, "<th>A: before.json</th><th>B: after.json</th>"));
  // 1.25 s -> 1 s: 250 ms less, 1 / 1.25 = 0.8, an improvement.
  CHECK(contains(page, "<td class=\"n\">1.25 s</td><td class=\"n\">1 s</td>"
                       "<td class=\"n better\">&minus;250 ms</td><td class=\"n better\">0.800x</td>"));
  // MFU 40% -> 50%: +10 points, 1.25x, an improvement too.
  CHECK(contains(page, "<td class=\"n better\">+10.0 pt</td><td class=\"n better\">1.250x</td>"));
  // Unchanged memory is neither better nor worse.
  CHECK(contains(page, "<td class=\"n\">+0 B</td><td class=\"n\">1.000x</td>"));
  CHECK(contains(page, "exposed comm, data"));
  CHECK_FALSE(contains(page, "exposed comm, expert")); // zero in both runs: no row
  CHECK(contains(page, "t 8 x cp 1 x p 1 x d 2, micro-batch 2 of 16, recompute none, 1f1b"));
  CHECK(contains(page, "<rect")); // the two iterations as bars
  CHECK_FALSE(contains(page, "src=\"http"));
}

TEST_CASE("compare: a slower B is marked worse, and the page is the same bytes every time") {
  const RunSummaryText a{"a.json", summary(1.0, 1.0, 0.0, 0.5, 1e9)};
  const RunSummaryText b{"b.json", summary(2.0, 1.0, 1.0, 0.25, 2e9)};
  const std::string page = compare_html(a, b);
  CHECK(contains(page, "<td class=\"n worse\">+1 s</td><td class=\"n worse\">2.000x</td>"));
  CHECK(page == compare_html(a, b));
}

TEST_CASE("compare: fields an older summary lacks show as a dash") {
  const std::string old = R"({"iteration_time_s": 2, "breakdown_s": {"compute": 2}, "exposed_comm_by_kind_s": {}})";
  const std::string page = compare_html({"old.json", old}, {"new.json", summary(1.0, 1.0, 0.0, 0.5, 1e9)});
  CHECK(contains(page, "<th>MFU</th><td class=\"n\">&ndash;</td><td class=\"n\">50.0%</td><td></td><td></td>"));
}

TEST_CASE("compare: text that is not JSON is located at its line and column, JSON that is no summary at 1:1") {
  const RunSummaryText good{"good.json", summary(1.0, 1.0, 0.0, 0.5, 1e9)};
  try {
    (void)compare_html(good, {"bad.json", "{\n  \"iteration_time_s\": 1,\n  oops\n}"});
    FAIL("expected an InputError");
  } catch (const twocs::InputError& e) {
    REQUIRE(e.location());
    CHECK(e.location()->file == "bad.json");
    CHECK(e.location()->line == 3);
    CHECK(e.location()->column == 3);
    CHECK(contains(e.fix(), "twocs run --json"));
  }
  try {
    (void)compare_html({"study.json", R"({"runs": []})"}, good);
    FAIL("expected an InputError");
  } catch (const twocs::InputError& e) {
    REQUIRE(e.location());
    CHECK(e.location()->line == 1);
    CHECK(e.problem() == "'study.json' is not a twocs run summary (no 'iteration_time_s')");
  }
}
