// `twocs sweep` and `twocs report` from the command line: a bad study is exit 2 naming the
// study file's line and column; the report page of a results CSV has its charts.
#include <doctest/doctest.h>

#include <utility>

#include <fmt/format.h>

#include "cli/cli_capture.hpp"

using namespace twocs::test;

TEST_CASE("sweep: a misspelt axis key exits 2 at the study's line and column, with a suggestion") {
  const TempDir dir("sweep-bad-study");
  const std::string study =
      dir.write("s.yaml", "study: bad\nbase:\n  platform: " + source_file("platforms/dgx-a100-80gb.yaml") +
                              "\naxes:\n  - {key: cluster.network.bandwith, values: [25GB/s]}\n");
  const auto r = run_command_line({"sweep", study, "--output", dir.file("out.csv")});
  CHECK(r.code == 2);
  CHECK(contains(r.err, "s.yaml:5:11: error:"));
  CHECK(contains(r.err, "did you mean 'bandwidth'?"));
  CHECK(!std::filesystem::exists(dir.file("out.csv")));
}

TEST_CASE("sweep: an empty value list exits 2") {
  const TempDir dir("sweep-empty");
  const std::string study = dir.write("s.yaml", "axes:\n  - {key: model.layers, values: []}\n");
  const auto r = run_command_line({"sweep", study});
  CHECK(r.code == 2);
  CHECK(contains(r.err, "s.yaml:2:33: error:"));
}

TEST_CASE("report: a results CSV becomes one self-contained page with non-empty charts") {
  const TempDir dir("study-report");
  const std::string csv = dir.write(
      "r.csv", "scenario,model.hidden,status,reason,iteration_time_s,breakdown_s.compute,breakdown_s.exposed_comm,"
               "breakdown_s.overlapped_comm,breakdown_s.idle,exposed_comm_by_kind_s.tensor,"
               "exposed_comm_by_kind_s.pipeline,exposed_comm_by_kind_s.data,comm_busy_s,comm_fraction,"
               "exposed_comm_fraction,mfu\n"
               "0,1024,ok,,1.0,0.6,0.3,0.2,0.1,0.2,0.05,0.05,0.5,0.45,0.3,0.4\n"
               "1,2048,ok,,2.0,1.5,0.3,0.4,0.2,0.1,0.1,0.1,0.7,0.31,0.15,0.5\n"
               "2,4096,oom,\"error: does not fit, 90 GB\",,,,,,,,,,,,\n");
  const auto r = run_command_line({"report", csv, "-o", dir.file("r.html")});
  REQUIRE(r.code == 0);
  const std::string html = read_text(dir.file("r.html"));
  CHECK(contains(html, "3 scenarios: 2 ok, 1 oom."));
  CHECK(contains(html, "Communication fraction against model.hidden"));
  CHECK(contains(html, "<rect"));
  CHECK(contains(html, "<circle"));
  CHECK(!contains(html, "src=\"http")); // nothing fetched when viewing
  CHECK(!contains(html, "<script src"));
}

TEST_CASE(
    "report: the table shows 4 significant digits of a fraction, the full value on hover, whole numbers as written") {
  const TempDir dir("study-report-digits");
  const std::string csv = dir.write("r.csv", "scenario,model.hidden,status,reason,iteration_time_s,memory.peak_bytes\n"
                                             "0,1024,ok,,1.2031942759893859,40170915840\n");
  REQUIRE(run_command_line({"report", csv, "-o", dir.file("r.html")}).code == 0);
  const std::string html = read_text(dir.file("r.html"));
  CHECK(contains(html, "<td class=\"n\" title=\"1.2031942759893859\">1.203</td>"));
  CHECK(contains(html, "<td>40170915840</td>"));
  CHECK(contains(html, "<td>1024</td>"));
}

TEST_CASE("report: zipped axes get one chart, and two axes get one line per value of the shorter against the other") {
  const TempDir dir("study-report-zip");
  std::string text =
      "scenario,model.name,model.layers,whatif.generations,status,reason,iteration_time_s,comm_fraction\n";
  int scenario = 0;
  for (const auto& [name, layers] : {std::pair{"bert", 24}, std::pair{"gpt", 96}})
    for (int generation = 0; generation < 3; ++generation)
      text += fmt::format("{},{},{},{},ok,,1.0,{}\n", scenario++, name, layers, generation, 0.1 * (generation + 1));
  const std::string csv = dir.write("r.csv", text);
  REQUIRE(run_command_line({"report", csv, "-o", dir.file("r.html")}).code == 0);
  const std::string html = read_text(dir.file("r.html"));
  CHECK(contains(html, "<h2>Communication fraction against model.name</h2>"));
  CHECK_FALSE(contains(html, "<h2>Communication fraction against model.layers</h2>")); // zipped with model.name
  CHECK(contains(html, "<h2>Communication fraction against whatif.generations</h2>"));
  CHECK(contains(html, "<h2>Communication fraction against whatif.generations, one line per model.name</h2>"));
}

TEST_CASE("report: exposed expert and context comm get their own bar parts only where a scenario has them") {
  const TempDir dir("study-report-moe");
  const std::string header =
      "scenario,model.hidden,status,reason,iteration_time_s,breakdown_s.compute,breakdown_s.idle,"
      "exposed_comm_by_kind_s.tensor,exposed_comm_by_kind_s.pipeline,"
      "exposed_comm_by_kind_s.data,exposed_comm_by_kind_s.expert,"
      "exposed_comm_by_kind_s.context,comm_fraction,exposed_comm_fraction,mfu\n";
  const std::string moe = dir.write("moe.csv", header + "0,1024,ok,,1.0,0.6,0.1,0.1,0,0,0.2,0,0.4,0.3,0.4\n");
  const std::string dense = dir.write("dense.csv", header + "0,1024,ok,,1.0,0.6,0.1,0.1,0,0.3,0,0,0.4,0.3,0.4\n");
  REQUIRE(run_command_line({"report", moe, "-o", dir.file("moe.html")}).code == 0);
  REQUIRE(run_command_line({"report", dense, "-o", dir.file("dense.html")}).code == 0);
  const std::string with_expert = read_text(dir.file("moe.html"));
  const std::string without = read_text(dir.file("dense.html"));
  CHECK(contains(with_expert, "exposed expert comm"));
  CHECK(!contains(with_expert, "exposed context comm"));
  CHECK(!contains(without, "exposed expert comm"));
  CHECK(contains(without, "exposed data comm"));
}

TEST_CASE("report: a CSV that is not a sweep's exits 2") {
  const TempDir dir("study-report-bad");
  const std::string csv = dir.write("x.csv", "a,b\n1,2\n");
  const auto r = run_command_line({"report", csv, "-o", dir.file("x.html")});
  CHECK(r.code == 2);
  CHECK(contains(r.err, "not a twocs sweep results CSV"));
}
