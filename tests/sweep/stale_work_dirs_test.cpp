// Scratch folders of sweeps killed with SIGKILL are removed by the next sweep; those of running
// sweeps are kept (src/sweep/stale_work_dirs.cpp). Every other way a sweep ends removes its own
// (signals_test.cpp, disk_full_test.cpp check it).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

#include <twocs/sweep/sweep.hpp>

#include "sweep/sweep_fixture.hpp"

using namespace twocs;

namespace {

/// The id of a process that has exited and been reaped: no process has it (until the kernel
/// reuses it, which takes a full wrap of the pid space).
long dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

} // namespace

TEST_CASE("a new sweep removes the scratch folders of dead sweeps and keeps live ones and strangers") {
  const auto parent = std::filesystem::temp_directory_path() / ("twocs-stale-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(parent);
  std::filesystem::create_directories(parent);
  const auto dead = sweep::work_dir_of(parent, dead_pid());
  const auto live = sweep::work_dir_of(parent, ::getpid());
  const auto stranger = parent / "twocs-sweep-notapid";
  const auto file_not_dir = sweep::work_dir_of(parent, dead_pid());
  for (const auto& dir : {dead, live, stranger}) {
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "3.err") << "scratch\n";
  }
  std::ofstream(file_not_dir) << "a file, not a sweep's folder\n";
  CHECK(dead.filename().string().starts_with("twocs-sweep-"));

  CHECK(sweep::remove_stale_work_dirs(parent) == 1);
  CHECK_FALSE(std::filesystem::exists(dead));
  CHECK(std::filesystem::exists(live / "3.err"));
  CHECK(std::filesystem::exists(stranger / "3.err"));
  CHECK(std::filesystem::exists(file_not_dir));
  CHECK(sweep::remove_stale_work_dirs(parent) == 0); // nothing left to remove
  CHECK(sweep::remove_stale_work_dirs(parent / "missing") == 0);
  std::filesystem::remove_all(parent);
}

TEST_CASE("the scratch folder of a sweep killed with SIGKILL is removed when the next sweep starts") {
  const twocs::test::StudyFolder folder("stale-sweep");
  const auto tmp = folder.root / "tmp";
  std::filesystem::create_directories(tmp);
  const pid_t first = twocs::test::start_sweep(folder, "/dev/null", {tmp});
  twocs::test::wait_for_rows(folder.csv(), 2);
  ::kill(first, SIGKILL);
  twocs::test::wait_exit(first);
  CHECK(std::filesystem::exists(sweep::work_dir_of(tmp, first)));
  const pid_t second = twocs::test::start_sweep(folder, "/dev/null", {tmp});
  // Removed as the second sweep starts, before its first scenario: the first row it adds shows it.
  twocs::test::wait_for_rows(folder.csv(), twocs::test::read_results(folder.csv()).rows.size() + 1);
  CHECK_FALSE(std::filesystem::exists(sweep::work_dir_of(tmp, first)));
  REQUIRE(twocs::test::wait_exit(second) == 0);
  CHECK(twocs::test::scratch_folders(tmp).empty());
}
