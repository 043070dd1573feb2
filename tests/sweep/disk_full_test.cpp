// A disk that fills in the middle of a sweep. Without root, the file size limit (RLIMIT_FSIZE,
// SIGXFSZ ignored: a write past it fails with EFBIG) stands in for a full disk (ENOSPC), which
// /dev/full gives directly. The row being added leaves no trace, the sweep stops with a message
// that says what to do, and a rerun with room completes the CSV as an uninterrupted sweep
// writes it. The same when the scenarios' scratch folder is the one that cannot be written.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <system_error>

#include "sweep/results_file.hpp"
#include "sweep/sweep_fixture.hpp"

using namespace twocs::test;
using twocs::sweep::detail::ResultsAppender;

TEST_CASE("a row that the disk has no room for is reported as ENOSPC") {
  ResultsAppender full("/dev/full");
  CHECK(full.append({"0", "ok"}) == std::errc::no_space_on_device);
}

TEST_CASE("a row cut short by a full disk is removed whole from the CSV") {
  const StudyFolder folder("fsize-unit");
  const fs::path csv = folder.csv();
  std::ofstream(csv) << "scenario,status\n0,ok\n";
  const pid_t child = fork();
  if (child == 0) { // the limit is the process's: set it in a child, not in the test runner
    signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{24, 24};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(2);
    ResultsAppender appender(csv);
    const std::error_code error = appender.append({"1", "a status longer than the room left"});
    _exit(error == std::errc::file_too_large ? 0 : 1);
  }
  CHECK(wait_exit(child) == 0);
  CHECK(file_text(csv) == "scenario,status\n0,ok\n");
}

TEST_CASE("a sweep whose CSV fills the disk stops with whole rows, and a rerun completes it") {
  const StudyFolder folder("disk-full");
  const auto reference = uninterrupted_rows(folder);
  const std::string full = file_text(folder.csv("reference.csv"));
  // Room for the header and six rows and a half: the seventh or so does not fit. Each scenario's
  // JSON summary (about 2 kB) still fits, so the CSV is the first file to fail.
  const auto room = static_cast<rlim_t>(length_of_lines(full, 7) + 150);
  const fs::path tmp = folder.root / "tmp";
  fs::create_directories(tmp);
  const fs::path log = folder.root / "first.log";
  const int code = wait_exit_within(start_sweep(folder, log, {tmp, room}));
  const std::string message = file_text(log);
  CHECK_MESSAGE(code == 2, message);
  CHECK_MESSAGE(contains(message, "out.csv: error: cannot add scenario "), message);
  CHECK_MESSAGE(contains(message, "File too large; the sweep stopped, "), message);
  CHECK_MESSAGE(contains(message, "fix: free space on its disk"), message);
  const auto before = check_stopped_with_whole_rows(folder, tmp);

  check_resume_completes(folder, before, reference);
}

TEST_CASE("a sweep whose scratch folder's disk is full stops before it records a wrong row") {
  const StudyFolder folder("scratch-full");
  const auto reference = uninterrupted_rows(folder);
  const std::string full = file_text(folder.csv("reference.csv"));
  std::ofstream(folder.csv()) << full.substr(0, length_of_lines(full, 4)); // three rows done
  const fs::path tmp = folder.root / "tmp";
  fs::create_directories(tmp);
  const fs::path log = folder.root / "first.log";
  // Too little room for a scenario's JSON summary; enough for its error message.
  const int code = wait_exit_within(start_sweep(folder, log, {tmp, 1000}));
  const std::string message = file_text(log);
  CHECK_MESSAGE(code == 2, message);
  CHECK_MESSAGE(contains(message, "error: scenario 3's process could not write its scratch files in '"), message);
  CHECK_MESSAGE(contains(message, "fix: free space in the temporary folder"), message);
  CHECK(file_text(folder.csv()) == full.substr(0, length_of_lines(full, 4)));
  CHECK(scratch_folders(tmp).empty());

  REQUIRE(wait_exit(start_sweep(folder)) == 0);
  CHECK(without_wall_times(read_results(folder.csv())).rows == reference.rows);
}

TEST_CASE("a sweep whose CSV path is a pipe or a device is refused, and the pipe is left as it was") {
  // /dev/full or /dev/zero would never finish being read back; a rename over a pipe or a device
  // would replace it with a plain file.
  const StudyFolder folder("csv-fifo");
  REQUIRE(::mkfifo(folder.csv().c_str(), 0644) == 0);
  const fs::path log = folder.root / "first.log";
  const int code = wait_exit_within(start_sweep(folder, log));
  const std::string message = file_text(log);
  CHECK_MESSAGE(code == 2, message);
  CHECK_MESSAGE(contains(message, "is not a regular file: a sweep reads its CSV back"), message);
  CHECK(fs::is_fifo(folder.csv()));
  CHECK_FALSE(fs::exists(folder.csv("out.csv.lock")));
}
