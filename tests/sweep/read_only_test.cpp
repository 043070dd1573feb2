// The CSV's folder turned read-only in the middle of a sweep. Rows still reach the CSV (it is
// open already), but the final rewrite, sorted by scenario, cannot replace it: the sweep says
// that every row is there and that a rerun in a writable folder sorts them, without running
// anything again. chmod denies root nothing, so a test run as root runs the sweep as `nobody`.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include "sweep/sweep_fixture.hpp"

using namespace twocs::test;

namespace {

constexpr uid_t nobody = 65534;
constexpr int cannot_drop_root = 125;     // start_program's child: setuid failed
constexpr int cannot_run_as_nobody = 126; // start_program's child: nobody cannot reach twocs

} // namespace

TEST_CASE("a sweep whose folder turns read-only keeps every row, and a rerun sorts them") {
  const StudyFolder folder("read-only");
  const auto reference = uninterrupted_rows(folder);
  fs::remove(folder.csv("reference.csv"));
  Launch how;
  if (geteuid() == 0) how.user = nobody;
  chmod(folder.root.c_str(), 0777);
  const fs::path log = folder.root.parent_path() / (folder.root.filename().string() + ".log");
  const pid_t sweep = start_sweep(folder, log, how);
  wait_for_rows(folder.csv(), 3);
  chmod(folder.root.c_str(), 0555);
  const int code = wait_exit_within(sweep);
  chmod(folder.root.c_str(), 0755);
  const std::string message = file_text(log);
  fs::remove(log);
  if (code == cannot_drop_root || code == cannot_run_as_nobody) {
    MESSAGE("skipped: the test runs as root and cannot run twocs as user nobody, to whom chmod would deny writes");
    return;
  }
  CHECK_MESSAGE(code == 2, message);
  CHECK_MESSAGE(contains(message, "error: every scenario's row is in '"), message);
  CHECK_MESSAGE(contains(message, "but it could not be rewritten sorted by scenario"), message);
  CHECK_MESSAGE(contains(message, "Permission denied"), message);
  CHECK_MESSAGE(contains(message, "fix: make its folder writable"), message);
  const auto before = read_results(folder.csv());
  CHECK(before.rows.size() == tiny_scenarios);

  REQUIRE(wait_exit(start_sweep(folder)) == 0);
  CHECK(without_wall_times(read_results(folder.csv())).rows == reference.rows);
  CHECK_FALSE(fs::exists(folder.csv("out.csv.lock")));
}
