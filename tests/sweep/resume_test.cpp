// `twocs sweep` as a user runs it: killed with SIGKILL mid-way and rerun, it finishes with
// every scenario exactly once and does not rerun finished ones; a torn last line is dropped;
// a CSV of another study is refused; a scenario past its time limit is a timeout row.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <twocs/report/results_csv.hpp>

namespace fs = std::filesystem;
using twocs::report::ResultsTable;

namespace {

struct StudyFolder {
  fs::path root = fs::temp_directory_path() / ("twocs-sweep-test-" + std::to_string(::getpid()));
  StudyFolder() {
    fs::remove_all(root);
    fs::create_directories(root);
    std::ofstream(root / "w.yaml") << "model: {layers: 1, hidden: 256, heads: 4, vocab: 1000, seq_len: 64}\n"
                                      "training: {global_batch: 2, micro_batch: 1,\n"
                                      "  parallelism: {tensor: 2, pipeline: 1, data: 1}}\n";
    std::ofstream(root / "s.yaml") << "study: tiny\nbase:\n  workload: w.yaml\n  platform: " TWOCS_SOURCE_DIR
                                      "/platforms/dgx-a100-80gb.yaml\n  set: {cluster.nodes: 1}\naxes:\n"
                                      "  - {key: model.hidden, values: [128, 256, 102]}\n"
                                      "  - zip:\n      - {key: model.seq_len, values: [32, 64, 96, 128]}\n"
                                      "      - {key: training.global_batch, values: [2, 4, 2, 4]}\n";
  }
  ~StudyFolder() { fs::remove_all(root); }
  [[nodiscard]] fs::path csv() const { return root / "out.csv"; }
};

constexpr std::size_t scenarios = 12;

pid_t start_sweep(const StudyFolder& folder, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{
      TWOCS_PROGRAM, "sweep", (folder.root / "s.yaml").string(), "--jobs", "1", "--output", folder.csv().string()};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO);
    dup2(null, STDERR_FILENO);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

int wait_exit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::size_t line_count(const fs::path& path) {
  const std::string text = read_text(path);
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

/// Rows by scenario index; CHECKs that none appears twice.
std::map<std::string, std::vector<std::string>> rows_by_scenario(const ResultsTable& table) {
  std::map<std::string, std::vector<std::string>> rows;
  for (const auto& row : table.rows) CHECK_MESSAGE(rows.emplace(row.front(), row).second, "scenario " << row.front());
  return rows;
}

} // namespace

TEST_CASE("a sweep killed with SIGKILL and rerun holds every scenario exactly once") {
  const StudyFolder folder;
  const pid_t first = start_sweep(folder);
  // Wait (bounded) for three finished rows, then kill the sweep without warning.
  for (int i = 0; i < 3000 && line_count(folder.csv()) < 4; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ::kill(first, SIGKILL);
  wait_exit(first);
  const auto before = twocs::report::parse_results_csv(read_text(folder.csv()));
  REQUIRE(before.rows.size() >= 3);
  REQUIRE(before.rows.size() < scenarios);

  REQUIRE(wait_exit(start_sweep(folder)) == 0);
  const auto after = twocs::report::parse_results_csv(read_text(folder.csv()));
  CHECK(after.columns == before.columns);
  const auto rows = rows_by_scenario(after);
  CHECK(rows.size() == scenarios);
  for (std::size_t i = 0; i < scenarios; ++i) CHECK(rows.contains(std::to_string(i)));
  for (const auto& row : before.rows) CHECK(rows.at(row.front()) == row); // not rerun: same wall times
  const std::size_t status = after.column("status");
  CHECK(rows.at("0")[status] == "ok");
  CHECK(rows.at("8")[status] == "infeasible"); // hidden 102 does not divide by 4 heads
  CHECK(after.rows.front().front() == "0");    // sorted by scenario at the end
}

TEST_CASE("a torn last line is dropped and its scenario rerun") {
  const StudyFolder folder;
  REQUIRE(wait_exit(start_sweep(folder)) == 0);
  const std::string full = read_text(folder.csv());
  std::string cut = full.substr(0, full.size() - 1);
  for (int i = 0; i < 2; ++i) cut = cut.substr(0, cut.rfind('\n')); // drop the last two rows' ends
  std::ofstream(folder.csv(), std::ios::trunc) << cut.substr(0, cut.size() - 5);
  REQUIRE(wait_exit(start_sweep(folder)) == 0);
  const auto rows = rows_by_scenario(twocs::report::parse_results_csv(read_text(folder.csv())));
  CHECK(rows.size() == scenarios);
}

TEST_CASE("a results CSV of another study is refused with exit code 2") {
  const StudyFolder folder;
  std::ofstream(folder.csv()) << "scenario,other,status\n0,1,ok\n";
  CHECK(wait_exit(start_sweep(folder)) == 2);
  CHECK(read_text(folder.csv()) == "scenario,other,status\n0,1,ok\n");
}

TEST_CASE("a scenario past the time limit is killed and recorded as a timeout") {
  const StudyFolder folder;
  REQUIRE(wait_exit(start_sweep(folder, {"--timeout", "0.000001"})) == 0);
  const auto table = twocs::report::parse_results_csv(read_text(folder.csv()));
  REQUIRE(table.rows.size() == scenarios);
  CHECK(table.rows.front()[table.column("status")] == "timeout");
}
