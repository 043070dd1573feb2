// The study page people read: charts that scale to the page's width, a hover text on every bar
// part and point, a compact table that links the full CSV, and the figures a study names.
#include <doctest/doctest.h>

#include <filesystem>

#include "cli/cli_capture.hpp"

using namespace twocs::test;

namespace {

const std::string results_csv =
    "scenario,model.hidden,status,reason,iteration_time_s,breakdown_s.compute,breakdown_s.exposed_comm,"
    "breakdown_s.overlapped_comm,breakdown_s.idle,exposed_comm_by_kind_s.tensor,exposed_comm_by_kind_s.pipeline,"
    "exposed_comm_by_kind_s.data,comm_busy_s,comm_fraction,exposed_comm_fraction,mfu,world_size\n"
    "0,1024,ok,,1.0,0.6,0.3,0.2,0.1,0.2,0.05,0.05,0.5,0.45,0.3,0.4,8\n"
    "1,2048,ok,,2.0,1.5,0.3,0.4,0.2,0.1,0.1,0.1,0.7,0.31,0.15,0.5,8\n";

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string study_file(const TempDir& dir, const std::string& figures) {
  return dir.write("s.yaml", "study: s\nbase:\n  platform: " + source_file("platforms/dgx-a100-80gb.yaml") +
                                 "\naxes:\n  - {key: model.hidden, values: [1024, 2048]}\n" + figures);
}

} // namespace

TEST_CASE("report: charts scale to the page width and every bar part and point has a hover text") {
  const TempDir dir("study-report-page");
  const std::string csv = dir.write("r.csv", results_csv);
  REQUIRE(run_command_line({"report", csv, "-o", dir.file("r.html")}).code == 0);
  const std::string html = read_text(dir.file("r.html"));
  CHECK(contains(html, "<svg class=\"chart\" viewBox=\"0 0 900 "));
  CHECK(!contains(html, "<svg class=\"chart\" width="));
  CHECK(contains(html, "width: calc(100% - 48px)"));
  CHECK(occurrences(html, "></rect>") == occurrences(html, "<rect"));
  CHECK(contains(html, "<title>#0 1024: compute 0.6 s (60.0%)</title>"));
  CHECK(contains(html, "<title>#1 2048: MFU 0.5</title>"));
  CHECK(occurrences(html, "</title></circle>") == occurrences(html, "<circle"));
  CHECK(occurrences(html, "</title></path>") == occurrences(html, "<path"));
}

TEST_CASE("report: the table shows the key columns and links the full CSV by its path from the page") {
  const TempDir dir("study-report-table");
  const std::string csv = dir.write("r.csv", results_csv);
  std::filesystem::create_directories(dir.path / "pages");
  REQUIRE(run_command_line({"report", csv, "-o", dir.file("pages/r.html")}).code == 0);
  const std::string html = read_text(dir.file("pages/r.html"));
  CHECK(contains(html, "<a href=\"../r.csv\">../r.csv</a>"));
  CHECK(contains(html, "<th>model.hidden</th><th>status</th><th>reason</th><th>iteration_time_s</th>"));
  CHECK(contains(html, "<th>mfu</th>"));
  CHECK(!contains(html, "<th>world_size</th>"));
  CHECK(!contains(html, "<th>breakdown_s.compute</th>"));
}

TEST_CASE("report --study draws the figures the study names instead of the automatic ones") {
  const TempDir dir("study-report-figures");
  const std::string csv = dir.write("r.csv", results_csv);
  const std::string study = study_file(dir, "figures:\n  - {x: model.hidden, metric: mfu}\n");
  REQUIRE(run_command_line({"report", csv, "--study", study, "-o", dir.file("r.html")}).code == 0);
  const std::string html = read_text(dir.file("r.html"));
  CHECK(contains(html, "<h2>mfu against model.hidden</h2>"));
  CHECK(!contains(html, "<h2>Communication fraction against model.hidden</h2>"));
  CHECK(contains(html, "<title>mfu, model.hidden 2048: 0.5</title>"));
}

TEST_CASE("report --study with a bad figure exits 2 at the study's line and column") {
  const TempDir dir("study-report-bad-figure");
  const std::string csv = dir.write("r.csv", results_csv);
  const std::string study = study_file(dir, "figures:\n  - {x: model.hidden, metric: comm_fracton}\n");
  const auto r = run_command_line({"report", csv, "--study", study, "-o", dir.file("r.html")});
  CHECK(r.code == 2);
  CHECK(contains(r.err, "s.yaml:7:31: error:"));
  CHECK(contains(r.err, "did you mean 'comm_fraction'?"));
  CHECK(!std::filesystem::exists(dir.file("r.html")));
}
