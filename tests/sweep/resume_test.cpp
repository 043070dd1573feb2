// `twocs sweep` as a user runs it: killed with SIGKILL mid-way and rerun, it finishes with
// every scenario exactly once and does not rerun finished ones; a torn last line is dropped;
// a CSV of another study is refused; a scenario past its time limit is a timeout row.
#include <doctest/doctest.h>

#include <csignal>

#include "sweep/sweep_fixture.hpp"

using namespace twocs::test;

TEST_CASE("a sweep killed with SIGKILL and rerun holds every scenario exactly once") {
  const StudyFolder folder;
  const pid_t first = start_sweep(folder);
  wait_for_rows(folder.csv(), 3); // then kill the sweep without warning
  ::kill(first, SIGKILL);
  wait_exit(first);
  const auto before = read_results(folder.csv());
  REQUIRE(before.rows.size() >= 3);
  REQUIRE(before.rows.size() < tiny_scenarios);

  REQUIRE(wait_exit(start_sweep(folder)) == 0);
  const auto after = read_results(folder.csv());
  CHECK(after.columns == before.columns);
  const auto rows = rows_by_scenario(after);
  CHECK(rows.size() == tiny_scenarios);
  for (std::size_t i = 0; i < tiny_scenarios; ++i) CHECK(rows.contains(std::to_string(i)));
  for (const auto& row : before.rows) CHECK(rows.at(row.front()) == row); // not rerun: same wall times
  const std::size_t status = after.column("status");
  CHECK(rows.at("0")[status] == "ok");
  CHECK(rows.at("8")[status] == "infeasible"); // hidden 102 does not divide by 4 heads
  CHECK(after.rows.front().front() == "0");    // sorted by scenario at the end
}

TEST_CASE("a torn last line is dropped and its scenario rerun") {
  const StudyFolder folder;
  REQUIRE(wait_exit(start_sweep(folder)) == 0);
  const std::string full = file_text(folder.csv());
  std::string cut = full.substr(0, full.size() - 1);
  for (int i = 0; i < 2; ++i) cut = cut.substr(0, cut.rfind('\n')); // drop the last two rows' ends
  std::ofstream(folder.csv(), std::ios::trunc) << cut.substr(0, cut.size() - 5);
  REQUIRE(wait_exit(start_sweep(folder)) == 0);
  const auto rows = rows_by_scenario(read_results(folder.csv()));
  CHECK(rows.size() == tiny_scenarios);
}

TEST_CASE("a results CSV of another study is refused with exit code 2") {
  const StudyFolder folder;
  std::ofstream(folder.csv()) << "scenario,other,status\n0,1,ok\n";
  CHECK(wait_exit(start_sweep(folder)) == 2);
  CHECK(file_text(folder.csv()) == "scenario,other,status\n0,1,ok\n");
}

TEST_CASE("a scenario past the time limit is killed and recorded as a timeout") {
  const StudyFolder folder;
  REQUIRE(wait_exit(start_sweep(folder, "/dev/null", {}, "out.csv", {"--timeout", "0.000001"})) == 0);
  const auto table = read_results(folder.csv());
  REQUIRE(table.rows.size() == tiny_scenarios);
  CHECK(table.rows.front()[table.column("status")] == "timeout");
}
