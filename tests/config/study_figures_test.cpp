// A study's `figures:` list: each figure names axes of the study and a results metric; an
// unknown key, axis or metric, a list that is empty or not a list are errors at the study
// file's line and column, with the fix.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include <twocs/config/study.hpp>

#include "config/input_error_capture.hpp"

using namespace twocs;
using test::where;

namespace {

struct FiguresDir {
  std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("twocs-figures-test-" + std::to_string(::getpid()));
  FiguresDir() {
    std::filesystem::create_directories(root);
    std::ofstream(root / "w.yaml") << test::small_workload;
    std::ofstream(root / "p.yaml") << test::small_platform;
  }
  ~FiguresDir() { std::filesystem::remove_all(root); }
};

// Line 4 is `axes:`, lines 5-6 its entries; a figures list starts on line 7.
const std::string head = "base: {workload: w.yaml, platform: p.yaml}\n"
                         "# two axes\n"
                         "\n"
                         "axes:\n"
                         "  - {key: model.layers, values: [2, 4]}\n"
                         "  - {key: cluster.network.bandwidth, values: [10GB/s, 20GB/s]}\n";

config::Study study(const std::string& text) {
  static const FiguresDir dir;
  return config::parse_study({"s.yaml", text}, dir.root);
}

InputError figures_error(const std::string& figures) {
  return test::input_error_of([&] { (void)study(head + figures); });
}

} // namespace

TEST_CASE("figures name an x axis, an optional series axis and a metric, in the file's order") {
  const auto s = study(head + "figures:\n"
                              "  - {x: cluster.network.bandwidth, series: model.layers, metric: comm_fraction}\n"
                              "  - {x: model.layers, metric: mfu}\n");
  REQUIRE(s.figures.size() == 2);
  CHECK(s.figures[0].x == "cluster.network.bandwidth");
  CHECK(s.figures[0].series == "model.layers");
  CHECK(s.figures[0].metric == "comm_fraction");
  CHECK(s.figures[1].series.empty());
  CHECK(s.figures[1].metric == "mfu");
}

TEST_CASE("a study without figures has none, so its report draws the automatic charts") {
  CHECK(study(head).figures.empty());
}

TEST_CASE("a figure's unknown key is an error at the key, with a suggestion") {
  const auto e = figures_error("figures:\n  - {x: model.layers, metrc: mfu}\n");
  CHECK(where(e) == "s.yaml:8:23");
  CHECK(e.fix().find("metric") != std::string::npos);
}

TEST_CASE("a figure's x or series that is not an axis is an error at the value, naming the axes") {
  const auto x = figures_error("figures:\n  - {x: model.layer, metric: mfu}\n");
  CHECK(where(x) == "s.yaml:8:9");
  CHECK(x.problem().find("not an axis") != std::string::npos);
  CHECK(x.fix().find("model.layers") != std::string::npos);
  const auto series = figures_error("figures:\n  - {x: model.layers, series: model.hidden, metric: mfu}\n");
  CHECK(where(series) == "s.yaml:8:31");
  CHECK(series.fix().find("axis keys") != std::string::npos);
}

TEST_CASE("a figure's unknown metric is an error at the value, with the metrics allowed") {
  const auto e = figures_error("figures:\n  - {x: model.layers, metric: comm_fracton}\n");
  CHECK(where(e) == "s.yaml:8:31");
  CHECK(e.fix().find("comm_fraction") != std::string::npos);
}

TEST_CASE("a figure without x or metric is an error naming the missing key") {
  const auto e = figures_error("figures:\n  - {series: model.layers, metric: mfu}\n");
  CHECK(e.problem().find("x") != std::string::npos);
  CHECK(where(e).rfind("s.yaml:8:", 0) == 0);
  CHECK(figures_error("figures:\n  - {x: model.layers}\n").problem().find("metric") != std::string::npos);
}

TEST_CASE("figures that is empty or not a list is an error at the value") {
  CHECK(where(figures_error("figures: []\n")) == "s.yaml:7:10");
  CHECK(where(figures_error("figures: {x: model.layers, metric: mfu}\n")) == "s.yaml:7:10");
}
