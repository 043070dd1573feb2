// The progress of a long `twocs run`: what the bar and the plain line say (rendering only; no
// test depends on time passing).
#include <doctest/doctest.h>

#include <string>

#include "cli/progress.hpp"

namespace {

using twocs::cli::duration_text;
using twocs::cli::progress_bar;
using twocs::cli::progress_line;
using twocs::cli::ProgressSample;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST_CASE("the bar shows the fraction done, the counts, the rate and the time left") {
  // 1 M of 4 M tasks in 2 s: 0.5 M tasks/s, 3 M left -> 6 s.
  const std::string bar = progress_bar({1'000'000, 4'000'000, 2.0}, 20);
  CHECK(contains(bar, "[#####...............]"));
  CHECK(contains(bar, " 25%"));
  CHECK(contains(bar, "1.0 M/4.0 M tasks"));
  CHECK(contains(bar, "0.50 M tasks/s"));
  CHECK(contains(bar, "ETA 6 s"));
}

TEST_CASE("before any task has finished there is no rate and no ETA, a finished run shows a full bar") {
  const std::string start = progress_bar({0, 1000, 0.5}, 10);
  CHECK(contains(start, "[..........]"));
  CHECK_FALSE(contains(start, "ETA"));
  const std::string end = progress_bar({1000, 1000, 4.0}, 10);
  CHECK(contains(end, "[##########]"));
  CHECK(contains(end, "100%"));
  CHECK(contains(end, "ETA 0 s"));
}

TEST_CASE("the plain line for logs carries the same numbers without a bar") {
  const std::string line = progress_line({3'000'000, 4'000'000, 10.0});
  CHECK(line == "simulation: 75% (3.0 M of 4.0 M tasks, 0.30 M tasks/s  ETA 3 s)");
}

TEST_CASE("durations read as seconds, minutes or hours") {
  CHECK(duration_text(7.4) == "7 s");
  CHECK(duration_text(125) == "2 min 05 s");
  CHECK(duration_text(3720) == "1 h 02 min");
  CHECK(duration_text(-1) == "0 s");
}

} // namespace
