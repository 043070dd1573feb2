// Outputs survive an interrupted run: the real program is killed (SIGKILL, which it cannot
// catch) while it writes a large trace, and the target must then hold its old content, never
// part of the new one; the next complete run replaces it and removes the killed run's
// temporary file, so interrupted runs do not pile up files.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli_capture.hpp"

namespace fs = std::filesystem;

namespace {

using twocs::test::read_text;
using twocs::test::TempDir;

/// The default scenario (16 devices, unfolded) writes a trace of several megabytes.
std::vector<std::string> trace_run(const std::string& trace) {
  return {TWOCS_PROGRAM, "run", "--quiet", "--fold", "off", "--trace", trace};
}

pid_t spawn(const std::vector<std::string>& args) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

int wait_for(pid_t pid) {
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  return status;
}

std::vector<std::string> temporaries(const fs::path& directory) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(directory))
    if (e.path().filename().string().find(".tmp-") != std::string::npos) names.push_back(e.path().filename());
  return names;
}

/// Kills `pid` once its temporary trace file holds some bytes, i.e. in the middle of the
/// write. Returns false when the program finished first (nothing to check then).
bool kill_while_writing(pid_t pid, const fs::path& directory) {
  for (int polls = 0; polls < 600000; ++polls) {
    for (const auto& name : temporaries(directory)) {
      std::error_code ec;
      if (fs::file_size(directory / name, ec) > 0 && !ec) {
        ::kill(pid, SIGKILL);
        return true;
      }
    }
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  ::kill(pid, SIGKILL);
  return false;
}

} // namespace

TEST_CASE("a run killed while writing its trace leaves the old file, and the next run cleans up") {
  TempDir dir("atomic");
  const std::string trace = dir.file("timeline.json");
  const std::string old_content = "{\"old\": true}\n";
  twocs::test::TempDir reference_dir("atomic-reference");
  const std::string reference = reference_dir.file("timeline.json");
  const int done = wait_for(spawn(trace_run(reference)));
  REQUIRE((WIFEXITED(done) && WEXITSTATUS(done) == 0));
  const std::string complete = read_text(reference);
  REQUIRE(complete.size() > 1000000); // large enough that writing it takes a while

  (void)dir.write("timeline.json", old_content);
  int interrupted = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const pid_t pid = spawn(trace_run(trace));
    const bool killed = kill_while_writing(pid, dir.path);
    const int status = wait_for(pid);
    const std::string now = read_text(trace);
    if (killed && WIFSIGNALED(status)) {
      ++interrupted;
      CHECK(now == old_content); // never a partial trace
    } else {
      CHECK(now == complete); // it finished before the kill: the whole new trace
      (void)dir.write("timeline.json", old_content);
    }
  }
  CHECK(interrupted > 0);
  CHECK(temporaries(dir.path).size() <= static_cast<std::size_t>(interrupted)); // one per killed run at most

  const int last = wait_for(spawn(trace_run(trace)));
  REQUIRE((WIFEXITED(last) && WEXITSTATUS(last) == 0));
  CHECK(read_text(trace) == complete);
  CHECK(temporaries(dir.path).empty()); // the killed runs' temporary files are gone
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir.path)) names.push_back(e.path().filename());
  CHECK(names == std::vector<std::string>{"timeline.json"});
}
