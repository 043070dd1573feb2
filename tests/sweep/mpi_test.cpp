// `mpirun -n K twocs sweep` (built only when CMake found MPI; otherwise ctest reports these as
// skipped): its rows equal the serial sweep's (wall times aside) for 1, 2 and 3 ranks, and a
// job killed with SIGKILL, or interrupted as Ctrl-C does, then rerun holds every scenario
// exactly once, finished ones not rerun. Also the one message format between ranks.
#ifdef TWOCS_HAVE_MPI
#include <doctest/doctest.h>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <sys/stat.h>

#include "sweep/mpi_transport.hpp"
#include "sweep/sweep_fixture.hpp"

using namespace twocs::test;

namespace {

/// mpirun made to work wherever the suite runs: as root (CI), on fewer cores than ranks, in
/// containers without ssh or network (local launch, shared-memory transport without ptrace).
/// Under AddressSanitizer (-DTWOCS_SANITIZE=ON) the ranks' leak check is off: Open MPI 4.1 leaks
/// in MPI_Init and its MCA components (ompi_op_base_op_select, dlopened plugins), which
/// LeakSanitizer would report at every rank's exit; the sweep's own code is leak-checked by the
/// serial sweep tests.
std::vector<std::string> mpirun(int ranks) {
  return {TWOCS_MPIEXEC,
          "-x",
          "ASAN_OPTIONS=detect_leaks=0",
          "-n",
          std::to_string(ranks),
          "--allow-run-as-root",
          "--oversubscribe",
          "--bind-to",
          "none",
          "--mca",
          "plm",
          "isolated",
          "--mca",
          "pml",
          "ob1",
          "--mca",
          "btl",
          "self,vader",
          "--mca",
          "btl_vader_single_copy_mechanism",
          "none"};
}

pid_t start_mpi_sweep(const StudyFolder& folder, int ranks, const std::string& csv, const fs::path& log) {
  std::vector<std::string> args = mpirun(ranks);
  args.insert(args.end(), {TWOCS_PROGRAM, "sweep", folder.study(), "--output", folder.csv(csv).string()});
  return start_program(args, log);
}

void check_each_scenario_once(const twocs::report::ResultsTable& table, std::size_t scenarios) {
  const auto rows = rows_by_scenario(table);
  CHECK(rows.size() == scenarios);
  for (std::size_t i = 0; i < scenarios; ++i) CHECK(rows.contains(std::to_string(i)));
}

/// Starts a 2-rank sweep, sends `signal` to mpirun after a few rows, reruns the same command:
/// every scenario is then in the CSV exactly once, and the rows of the first run unchanged.
void interrupt_and_resume(int signal, const std::string& more_axes, std::size_t scenarios) {
  const StudyFolder folder("mpi-kill", more_axes);
  const fs::path log = folder.root / "first.log";
  const pid_t first = start_mpi_sweep(folder, 2, "out.csv", log);
  wait_for_rows(folder.csv(), 3);
  ::kill(first, signal);
  wait_exit(first);
  const auto before = read_results(folder.csv());
  REQUIRE_MESSAGE(before.rows.size() >= 3, file_text(log));
  REQUIRE(before.rows.size() < scenarios);

  const fs::path rerun = folder.root / "rerun.log";
  REQUIRE_MESSAGE(wait_exit(start_mpi_sweep(folder, 2, "out.csv", rerun)) == 0, file_text(rerun));
  const auto after = read_results(folder.csv());
  CHECK(after.columns == before.columns);
  check_each_scenario_once(after, scenarios);
  const auto rows = rows_by_scenario(after);
  for (const auto& row : before.rows) CHECK(rows.at(row.front()) == row); // not rerun: same wall times
}

/// Whether `text` (NUL-separated, as /proc/PID/cmdline and environ) holds `entry`.
bool holds(const std::string& text, const std::string& entry) {
  return ('\0' + text).find('\0' + entry + '\0') != std::string::npos;
}

/// The `twocs sweep` process of rank `rank` in the job of `launcher` (mpirun), found by its
/// environment; 0 when none is found within 30 s.
pid_t rank_process(pid_t launcher, int rank) {
  const auto descends = [launcher](pid_t pid) {
    for (int depth = 0; depth < 4 && pid > 1; ++depth) {
      const std::string stat = file_text(fs::path("/proc") / std::to_string(pid) / "stat");
      const std::size_t close = stat.rfind(')');
      if (close == std::string::npos) return false;
      pid = static_cast<pid_t>(std::atol(stat.c_str() + close + 4));
      if (pid == launcher) return true;
    }
    return false;
  };
  for (int i = 0; i < 3000; ++i) {
    for (const auto& entry : fs::directory_iterator("/proc")) {
      const pid_t pid = static_cast<pid_t>(std::atol(entry.path().filename().c_str()));
      if (pid <= 0 || !holds(file_text(entry.path() / "cmdline"), "sweep")) continue;
      if (holds(file_text(entry.path() / "environ"), "OMPI_COMM_WORLD_RANK=" + std::to_string(rank)) && descends(pid))
        return pid;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return 0;
}

/// The job's log holds `error` exactly once: one rank reported it, not every rank.
void check_reported_once(const fs::path& log, const std::string& error) {
  const std::string text = file_text(log);
  CHECK_MESSAGE(text.find(error) != std::string::npos, text);
  CHECK_MESSAGE(text.find(error) == text.rfind(error), text);
}

} // namespace

TEST_CASE("an mpirun sweep whose rank 1 is killed with SIGKILL ends, and a rerun completes it") {
  const StudyFolder folder("mpi-rank-killed");
  const pid_t reference_sweep = start_uninterrupted(folder); // the serial sweep: the MPI job's rows, wall times aside
  const fs::path log = folder.root / "first.log";
  const pid_t job = start_mpi_sweep(folder, 2, "out.csv", log);
  wait_for_rows(folder.csv(), 2);
  const pid_t rank1 = rank_process(job, 1);
  REQUIRE_MESSAGE(rank1 != 0, file_text(log));
  ::kill(rank1, SIGKILL);
  const int code = wait_exit_within(job);
  CHECK_MESSAGE(code != -2, "mpirun still runs a minute after its rank died: " << file_text(log));
  CHECK_MESSAGE(code != 0, file_text(log));
  std::size_t skipped = 0;
  const auto before = twocs::report::parse_results_csv(file_text(folder.csv()), &skipped);
  CHECK(skipped == 0);
  (void)rows_by_scenario(before); // each at most once

  const fs::path rerun = folder.root / "rerun.log";
  REQUIRE_MESSAGE(wait_exit(start_mpi_sweep(folder, 2, "out.csv", rerun)) == 0, file_text(rerun));
  const auto after = read_results(folder.csv());
  const auto rows = rows_by_scenario(after);
  for (const auto& row : before.rows) CHECK(rows.at(row.front()) == row); // not rerun
  CHECK(without_wall_times(after).rows == uninterrupted_rows(folder, reference_sweep).rows);
  MESSAGE("what the user saw: " << file_text(log));
}

TEST_CASE("mpirun with 1, 2 and 3 ranks writes the serial sweep's rows, wall times aside") {
  const StudyFolder folder("mpi-equal");
  REQUIRE(wait_exit(start_program(
              {TWOCS_PROGRAM, "sweep", folder.study(), "--jobs", "2", "--output", folder.csv("serial.csv")})) == 0);
  const auto serial = without_wall_times(read_results(folder.csv("serial.csv")));
  REQUIRE(serial.rows.size() == tiny_scenarios);
  for (int ranks : {1, 2, 3}) {
    CAPTURE(ranks);
    const std::string csv = "mpi" + std::to_string(ranks) + ".csv";
    const fs::path log = folder.root / (csv + ".log");
    CHECK_MESSAGE(wait_exit(start_mpi_sweep(folder, ranks, csv, log)) == 0, file_text(log));
    const auto mpi = without_wall_times(read_results(folder.csv(csv)));
    CHECK(mpi.columns == serial.columns);
    CHECK(mpi.rows == serial.rows); // sorted by scenario at the end, as the serial sweep's
  }
}

TEST_CASE("an mpirun sweep killed with SIGKILL, then rerun, holds every scenario exactly once") {
  interrupt_and_resume(SIGKILL, "", tiny_scenarios);
}

// Ctrl-C (SIGINT) makes mpirun send its ranks SIGCONT, a second later SIGTERM, then SIGKILL at
// once (Open MPI 4.1): rows keep coming for that second, about 30 a second on a 2-core machine
// (a fresh Debian 12 finished a three-times-longer study of 36 rows inside it), so this study is
// eight times longer.
TEST_CASE("an mpirun sweep interrupted as Ctrl-C does, then rerun, holds every scenario exactly once") {
  interrupt_and_resume(SIGINT, "  - {key: model.layers, values: [1, 2, 3, 4, 5, 6, 7, 8]}\n", 8 * tiny_scenarios);
}

TEST_CASE("under mpirun a bad study is reported once, by rank 0, and every rank exits 2") {
  const StudyFolder folder("mpi-bad");
  std::ofstream(folder.study(), std::ios::app) << "  - {key: model.layres, values: [1, 2]}\n";
  const fs::path log = folder.root / "bad.log";
  CHECK(wait_exit(start_mpi_sweep(folder, 2, "out.csv", log)) == 2);
  check_reported_once(log, "s.yaml:11:11: error: unknown key 'layres' in model");
  CHECK(!fs::exists(folder.csv()));
}

TEST_CASE("under mpirun a results CSV that is a pipe is refused by rank 0, every rank exits 2, no lock is left") {
  // A CSV that cannot be a results file is the fault rank 0 meets before any row here (a full
  // disk, after some rows, is the test below).
  const StudyFolder folder("mpi-fifo");
  REQUIRE(::mkfifo(folder.csv().c_str(), 0644) == 0);
  const fs::path log = folder.root / "fifo.log";
  CHECK(wait_exit(start_mpi_sweep(folder, 2, "out.csv", log)) == 2);
  check_reported_once(log, "is not a regular file: a sweep reads its CSV back");
  CHECK(fs::is_fifo(folder.csv()));
  CHECK_FALSE(fs::exists(folder.csv("out.csv.lock")));
}

TEST_CASE("under mpirun a CSV that fills its disk stops with whole rows, once reported, and a rerun completes it") {
  // The ranks alone get the file size limit (SIGXFSZ ignored: a write past it fails with EFBIG,
  // as ENOSPC does), set by a shell around each rank; mpirun and its daemon keep theirs. The
  // shared-memory transport would size its segment past the limit (ftruncate: EFBIG), so the
  // ranks talk over TCP on the loopback here.
  const StudyFolder folder("mpi-disk-full");
  const pid_t reference_sweep = start_uninterrupted(folder);
  const auto reference = uninterrupted_rows(folder, reference_sweep);
  const std::string full = file_text(folder.csv("reference.csv"));
  const std::size_t room = length_of_lines(full, 7) + 150; // the header, six rows and half the seventh
  std::vector<std::string> args = mpirun(2);
  const auto btl = std::find(args.begin(), args.end(), "self,vader");
  REQUIRE(btl != args.end());
  *btl = "self,tcp";
  args.insert(args.end(), {"/bin/sh", "-c", "trap '' XFSZ; exec prlimit --fsize=" + std::to_string(room) + " \"$@\"",
                           "rank", TWOCS_PROGRAM, "sweep", folder.study(), "--output", folder.csv().string()});
  const fs::path log = folder.root / "first.log";
  const fs::path tmp = folder.root / "tmp";
  fs::create_directories(tmp);
  CHECK(wait_exit_within(start_program(args, log, {tmp})) == 2);
  check_reported_once(log, "File too large; the sweep stopped, ");
  check_reported_once(log, "fix: free space on its disk");
  const auto before = check_stopped_with_whole_rows(folder, tmp);

  const fs::path rerun = folder.root / "rerun.log";
  REQUIRE_MESSAGE(wait_exit(start_mpi_sweep(folder, 2, "out.csv", rerun)) == 0, file_text(rerun));
  const auto after = read_results(folder.csv());
  check_each_scenario_once(after, tiny_scenarios);
  const auto rows = rows_by_scenario(after);
  for (const auto& row : before.rows) CHECK(rows.at(row.front()) == row); // not rerun
}

TEST_CASE("a finished scenario crosses between ranks unchanged, any bytes included") {
  using twocs::sweep::detail::FinishedScenario;
  const FinishedScenario s{7, "error", "bad: a,b \"c\"\n12:3", 0.1 + 0.2, {"7", "", "1:2", std::string("x\0y", 3)}, 15};
  const FinishedScenario back = twocs::sweep::detail::decode(twocs::sweep::detail::encode(s));
  CHECK(back.index == 7);
  CHECK(back.status == s.status);
  CHECK(back.reason == s.reason);
  CHECK(back.wall_time_s == s.wall_time_s); // exactly: the shortest text that reads back
  CHECK(back.row == s.row);
  CHECK(back.stopped_by == 15);
  CHECK_THROWS(twocs::sweep::detail::decode("3:abc9:x"));
}

#endif
