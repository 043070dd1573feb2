// `twocs report --compare A.json B.json [-o FILE]` on summaries that `twocs run --json` wrote.
#include <doctest/doctest.h>

#include <filesystem>

#include "cli/cli_capture.hpp"

using namespace twocs::test;

TEST_CASE("report --compare puts a run and its interconnect upgrade side by side") {
  const TempDir dir("report-compare");
  REQUIRE(run_command_line(small_run({"--quiet", "--json", dir.file("before.json")})).code == 0);
  REQUIRE(run_command_line(
              small_run({"--quiet", "--set", "cluster.network.bandwidth=100GB/s", "--json", dir.file("after.json")}))
              .code == 0);
  const auto r = run_command_line(
      {"report", "--compare", dir.file("before.json"), dir.file("after.json"), "-o", dir.file("c.html")});
  REQUIRE(r.code == 0);
  const std::string html = read_text(dir.file("c.html"));
  CHECK(contains(html, "<th>A: before.json</th><th>B: after.json</th>"));
  CHECK(contains(html, "<th>iteration time</th>"));
  CHECK(contains(r.out, "c.html"));
}

TEST_CASE("report --compare without -o writes A-vs-B.html in the current directory") {
  const TempDir dir("report-compare-default");
  REQUIRE(run_command_line(small_run({"--quiet", "--json", dir.file("x.json")})).code == 0);
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path);
  const auto r = run_command_line({"report", "--compare", "x.json", "x.json"});
  std::filesystem::current_path(cwd);
  CHECK(r.code == 0);
  CHECK(std::filesystem::exists(dir.path / "x-vs-x.html"));
}

TEST_CASE("report --compare refuses one file, a file that is no summary, and a CSV beside it") {
  const TempDir dir("report-compare-bad");
  const std::string csv = dir.write("r.csv", "scenario,status\n0,ok\n");
  const std::string bad = dir.write("bad.json", "{\"a\": 1,\n");
  CHECK(run_command_line({"report", "--compare", bad}).code == 2);
  const auto not_json = run_command_line({"report", "--compare", csv, bad, "-o", dir.file("c.html")});
  CHECK(not_json.code == 2);
  CHECK(contains(not_json.err, "r.csv:1:1: error: '" + csv + "' is not JSON"));
  CHECK_FALSE(std::filesystem::exists(dir.file("c.html")));
  CHECK(run_command_line({"report", csv, "--compare", bad, bad}).code == 2);
  const auto nothing = run_command_line({"report"});
  CHECK(nothing.code == 2);
  CHECK(contains(nothing.err, "--compare A.json B.json"));
  CHECK(contains(run_command_line({"report", csv}).err, "add -o study.html"));
}
