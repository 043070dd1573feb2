// The sweep tests' shared pieces: a 12-scenario study of tiny models in a fresh folder, the real
// program started in its own process (as a user or mpirun starts it), and the CSV read back.
#pragma once

#include <algorithm>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <doctest/doctest.h>

#include <twocs/report/results_csv.hpp>

namespace twocs::test {

namespace fs = std::filesystem;

struct StudyFolder {
  fs::path root;
  /// `more_axes`: YAML lines appended to the axes (each multiplies the 12 scenarios).
  explicit StudyFolder(const std::string& tag = "sweep", const std::string& more_axes = "")
      : root(fs::temp_directory_path() / ("twocs-" + tag + "-test-" + std::to_string(::getpid()))) {
    fs::remove_all(root);
    fs::create_directories(root);
    std::ofstream(root / "w.yaml") << "model: {layers: 1, hidden: 256, heads: 4, vocab: 1000, seq_len: 64}\n"
                                      "training: {global_batch: 2, micro_batch: 1,\n"
                                      "  parallelism: {tensor: 2, pipeline: 1, data: 1}}\n";
    std::ofstream(root / "s.yaml") << "study: tiny\nbase:\n  workload: w.yaml\n  platform: " TWOCS_SOURCE_DIR
                                      "/platforms/dgx-a100-80gb.yaml\n  set: {cluster.nodes: 1}\naxes:\n"
                                      "  - {key: model.hidden, values: [128, 256, 102]}\n"
                                      "  - zip:\n      - {key: model.seq_len, values: [32, 64, 96, 128]}\n"
                                      "      - {key: training.global_batch, values: [2, 4, 2, 4]}\n"
                                   << more_axes;
  }
  ~StudyFolder() { fs::remove_all(root); }
  StudyFolder(const StudyFolder&) = delete;
  StudyFolder& operator=(const StudyFolder&) = delete;
  [[nodiscard]] fs::path csv(const std::string& name = "out.csv") const { return root / name; }
  [[nodiscard]] std::string study() const { return (root / "s.yaml").string(); }
};

constexpr std::size_t tiny_scenarios = 12;

/// How start_program starts the program, beyond its arguments.
struct Launch {
  fs::path tmpdir;            // non-empty: TMPDIR (where a sweep keeps its scratch folder)
  rlim_t file_size_limit = 0; // non-zero: RLIMIT_FSIZE in bytes, SIGXFSZ ignored (a write past it: EFBIG)
  uid_t user = 0;             // non-zero: run as this user (a test run as root, to whom chmod denies nothing)
};

/// Starts `args` (args[0] the program) with stdout and stderr sent to `log` (or discarded).
inline pid_t start_program(std::vector<std::string> args, const fs::path& log = "/dev/null", const Launch& how = {}) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    const int out = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, STDOUT_FILENO);
    dup2(out, STDERR_FILENO);
    if (!how.tmpdir.empty()) setenv("TMPDIR", how.tmpdir.c_str(), 1);
    if (how.file_size_limit != 0) {
      signal(SIGXFSZ, SIG_IGN); // kept across exec: the write fails instead of killing the process
      const rlimit limit{how.file_size_limit, how.file_size_limit};
      if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(125);
    }
    if (how.user != 0 && (setgid(how.user) != 0 || setuid(how.user) != 0)) _exit(125);
    // That user may not reach the program (a build under a home folder only root enters).
    if (how.user != 0 && access(argv[0], X_OK) != 0) _exit(126);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

/// `twocs sweep` of the folder's study into `csv` (default out.csv), one scenario at a time.
inline pid_t start_sweep(const StudyFolder& folder, const fs::path& log = "/dev/null", const Launch& how = {},
                         const std::string& csv = "out.csv", std::vector<std::string> extra = {}) {
  std::vector<std::string> args{TWOCS_PROGRAM, "sweep", folder.study(), "--jobs", "1", "--output", folder.csv(csv)};
  args.insert(args.end(), extra.begin(), extra.end());
  return start_program(args, log, how);
}

/// The exit code, or -1 when killed by a signal.
inline int wait_exit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

inline std::string file_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::size_t line_count(const fs::path& path) {
  const std::string text = file_text(path);
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

/// Waits (bounded, 30 s) until the CSV holds `rows` rows.
inline void wait_for_rows(const fs::path& csv, std::size_t rows) {
  for (int i = 0; i < 3000 && line_count(csv) < rows + 1; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

inline report::ResultsTable read_results(const fs::path& csv) { return report::parse_results_csv(file_text(csv)); }

/// Rows by scenario index; CHECKs that none appears twice.
inline std::map<std::string, std::vector<std::string>> rows_by_scenario(const report::ResultsTable& table) {
  std::map<std::string, std::vector<std::string>> rows;
  for (const auto& row : table.rows) CHECK_MESSAGE(rows.emplace(row.front(), row).second, "scenario " << row.front());
  return rows;
}

/// Waits (bounded, 60 s) until `pid` has exited; its exit code, -1 when killed by a signal, or
/// -2 when it is still running at the deadline (then killed).
inline int wait_exit_within(pid_t pid, int seconds = 60) {
  for (int i = 0; i < seconds * 100; ++i) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return -2;
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// The CSV with its two measured columns (the child's and the scenario's wall time) blanked:
/// what must be identical between two sweeps of the same study.
inline report::ResultsTable without_wall_times(report::ResultsTable table) {
  for (const char* name : {"wall_time_s", "scenario_wall_time_s"}) {
    const std::size_t c = table.column(name);
    REQUIRE(c < table.columns.size());
    for (auto& row : table.rows) row[c].clear();
  }
  return table;
}

/// Starts an uninterrupted sweep of the folder's study into reference.csv (it may run beside the
/// test's own sweeps: another CSV, another scratch folder).
inline pid_t start_uninterrupted(const StudyFolder& folder) {
  return start_program(
      {TWOCS_PROGRAM, "sweep", folder.study(), "--jobs", "2", "--output", folder.csv("reference.csv")});
}

/// The rows of the uninterrupted sweep `pid` (start_uninterrupted), wall times aside.
inline report::ResultsTable uninterrupted_rows(const StudyFolder& folder, pid_t pid) {
  REQUIRE(wait_exit(pid) == 0);
  return without_wall_times(read_results(folder.csv("reference.csv")));
}

inline report::ResultsTable uninterrupted_rows(const StudyFolder& folder) {
  return uninterrupted_rows(folder, start_uninterrupted(folder));
}

/// Resumes the sweep of `folder`: it completes, keeps every row of `before` as it was (none is
/// run again) and ends with `reference`'s rows, wall times aside.
inline void check_resume_completes(const StudyFolder& folder, const report::ResultsTable& before,
                                   const report::ResultsTable& reference) {
  REQUIRE(wait_exit(start_sweep(folder)) == 0);
  const auto after = read_results(folder.csv());
  const auto rows = rows_by_scenario(after);
  for (const auto& row : before.rows) CHECK(rows.at(row.front()) == row); // not rerun
  CHECK(without_wall_times(after).rows == reference.rows);
}

/// The sweep's scratch folders (twocs-sweep-PID) in `tmpdir`.
inline std::vector<fs::path> scratch_folders(const fs::path& tmpdir) {
  std::vector<fs::path> found;
  std::error_code ignored;
  for (const auto& entry : fs::directory_iterator(tmpdir, ignored))
    if (entry.path().filename().string().starts_with("twocs-sweep-")) found.push_back(entry.path());
  return found;
}

/// The length of the first `lines` lines of `text`.
inline std::size_t length_of_lines(const std::string& text, std::size_t lines) {
  std::size_t at = 0;
  for (std::size_t i = 0; i < lines; ++i) at = text.find('\n', at) + 1;
  return at;
}

/// The CSV of a sweep that a full disk stopped (its scratch folders in `tmpdir`): whole rows only,
/// at least four scenarios and not all of them, no lock and no scratch folder left. Its rows.
inline report::ResultsTable check_stopped_with_whole_rows(const StudyFolder& folder, const fs::path& tmpdir) {
  const std::string cut = file_text(folder.csv());
  REQUIRE_FALSE(cut.empty());
  CHECK(cut.back() == '\n'); // no part of the row that did not fit
  std::size_t skipped = 0;
  auto before = report::parse_results_csv(cut, &skipped);
  CHECK(skipped == 0);
  CHECK(before.rows.size() >= 4);
  CHECK(before.rows.size() < tiny_scenarios);
  CHECK(scratch_folders(tmpdir).empty());
  CHECK_FALSE(fs::exists(folder.csv("out.csv.lock")));
  return before;
}

} // namespace twocs::test
