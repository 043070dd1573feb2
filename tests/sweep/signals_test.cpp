// SIGTERM, SIGINT and SIGHUP, to a sweep and to one of its scenarios' processes. The sweep stops
// between scenarios (exit 128 + the signal), keeps every finished row, leaves no scratch folder
// or lock behind, and says to rerun; a scenario's process stopped from outside gets no row (it
// is no result of the scenario) and the sweep says so. Either way the rerun completes the CSV as
// an uninterrupted sweep writes it.
#include <doctest/doctest.h>

#include <cstring>

#include "sweep/sweep_fixture.hpp"

using namespace twocs::test;

namespace {

std::string name_of(int signal) { return std::string("SIG") + sigabbrev_np(signal); }

/// The parent pid and state of process `pid` (/proc/PID/stat); {0, 0} once it is gone.
std::pair<pid_t, char> parent_and_state(pid_t pid) {
  const std::string stat = file_text(fs::path("/proc") / std::to_string(pid) / "stat");
  const std::size_t close = stat.rfind(')');
  if (close == std::string::npos || close + 4 >= stat.size()) return {0, 0};
  return {static_cast<pid_t>(std::atol(stat.c_str() + close + 4)), stat[close + 2]};
}

/// A scenario process of the sweep `sweep`, frozen with SIGSTOP so that a signal reaches it
/// before it ends; 0 when none is found within 30 s.
pid_t freeze_a_scenario(pid_t sweep) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    for (const auto& entry : fs::directory_iterator("/proc")) {
      const pid_t pid = static_cast<pid_t>(std::atol(entry.path().filename().c_str()));
      if (pid <= 0 || parent_and_state(pid).first != sweep || kill(pid, SIGSTOP) != 0) continue;
      for (int i = 0; i < 500; ++i) { // stopped, or it ended before the signal
        const char state = parent_and_state(pid).second;
        if (state == 'T') return pid;
        if (state == 'Z' || state == 0) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return 0;
}

/// Signals the sweep after three rows; checks what it leaves and that a rerun completes it.
void stop_sweep_with(int signal) {
  const StudyFolder folder("stop-sweep");
  const pid_t reference_sweep = start_uninterrupted(folder);
  const fs::path tmp = folder.root / "tmp", log = folder.root / "first.log";
  fs::create_directories(tmp);
  const pid_t sweep = start_sweep(folder, log, {tmp});
  wait_for_rows(folder.csv(), 3);
  kill(sweep, signal);
  CHECK(wait_exit_within(sweep) == 128 + signal);
  const std::string message = file_text(log);
  CHECK_MESSAGE(contains(message, "twocs: interrupted by " + name_of(signal) + "; "), message);
  CHECK_MESSAGE(contains(message, "rerun the same command to finish"), message);
  const auto before = read_results(folder.csv());
  CHECK(before.rows.size() >= 3);
  CHECK(before.rows.size() < tiny_scenarios);
  CHECK(scratch_folders(tmp).empty());
  CHECK_FALSE(fs::exists(folder.csv("out.csv.lock")));

  check_resume_completes(folder, before, uninterrupted_rows(folder, reference_sweep));
}

/// Signals one scenario's process: the sweep goes on without its row, then says so.
void stop_scenario_with(int signal) {
  const StudyFolder folder("stop-scenario");
  const pid_t reference_sweep = start_uninterrupted(folder);
  const fs::path log = folder.root / "first.log";
  const pid_t sweep = start_sweep(folder, log);
  wait_for_rows(folder.csv(), 2);
  const pid_t scenario = freeze_a_scenario(sweep);
  REQUIRE(scenario != 0);
  kill(scenario, signal);
  kill(scenario, SIGCONT);
  CHECK(wait_exit_within(sweep) == 128 + signal);
  const std::string message = file_text(log);
  const auto before = rows_by_scenario(read_results(folder.csv()));
  CHECK(before.size() == tiny_scenarios - 1); // every other scenario ran
  std::string missing;
  for (std::size_t i = 0; i < tiny_scenarios; ++i)
    if (!before.contains(std::to_string(i))) missing = std::to_string(i);
  CHECK_MESSAGE(contains(message, "twocs: the process of scenario " + missing +
                                      " was stopped from outside the sweep (" + name_of(signal) +
                                      "), so it has no row; 11 of 12 scenarios are in "),
                message);

  REQUIRE(wait_exit(start_sweep(folder)) == 0);
  const auto after = read_results(folder.csv());
  const auto rows = rows_by_scenario(after);
  for (const auto& [index, row] : before) CHECK(rows.at(index) == row); // only the missing one ran
  CHECK(without_wall_times(after).rows == uninterrupted_rows(folder, reference_sweep).rows);
}

} // namespace

TEST_CASE("SIGTERM to a sweep stops it between scenarios, and a rerun completes it") { stop_sweep_with(SIGTERM); }
TEST_CASE("SIGINT to a sweep stops it between scenarios, and a rerun completes it") { stop_sweep_with(SIGINT); }
TEST_CASE("SIGHUP to a sweep stops it between scenarios, and a rerun completes it") { stop_sweep_with(SIGHUP); }

TEST_CASE("SIGTERM to a scenario's process leaves its row to the rerun") { stop_scenario_with(SIGTERM); }
TEST_CASE("SIGINT to a scenario's process leaves its row to the rerun") { stop_scenario_with(SIGINT); }
TEST_CASE("SIGHUP to a scenario's process leaves its row to the rerun") { stop_scenario_with(SIGHUP); }

TEST_CASE("a sweep started with SIGHUP ignored (nohup) keeps ignoring it") {
  const StudyFolder folder("nohup");
  struct sigaction ignore {
  }, before{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGHUP, &ignore, &before); // inherited by the sweep across fork and exec
  const pid_t sweep = start_sweep(folder);
  sigaction(SIGHUP, &before, nullptr);
  wait_for_rows(folder.csv(), 2);
  kill(sweep, SIGHUP);
  CHECK(wait_exit_within(sweep) == 0);
  CHECK(read_results(folder.csv()).rows.size() == tiny_scenarios);
}
