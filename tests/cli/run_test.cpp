// `twocs run` as a user runs it: in-process through run_cli, checking exit codes, messages and
// the files it writes.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_capture.hpp"

namespace fs = std::filesystem;

namespace {

using twocs::test::read_text;
using twocs::test::TempDir;

twocs::test::CliResult run_twocs(std::vector<std::string> args) {
  return twocs::test::run_command_line(std::move(args));
}

std::vector<std::string> small(std::vector<std::string> extra = {}) { return twocs::test::small_run(std::move(extra)); }

} // namespace

TEST_CASE("the default scenario runs and prints the summary") {
  const auto r = run_twocs({"run"});
  CHECK(r.code == 0);
  CHECK(r.out.find("iteration time") != std::string::npos);
  CHECK(r.out.find("exposed comm") != std::string::npos);
  CHECK(r.out.find("MFU") != std::string::npos);
}

TEST_CASE("--help and --version succeed, no command or an unknown flag is bad usage") {
  CHECK(run_twocs({"--help"}).code == 0);
  CHECK(run_twocs({"run", "--help"}).code == 0);
  const auto version = run_twocs({"--version"});
  CHECK(version.code == 0);
  CHECK(version.out.find("twocs ") == 0);
  CHECK(run_twocs({}).code == 2);
  const auto unknown = run_twocs({"run", "--no-such-flag"});
  CHECK(unknown.code == 2);
  CHECK_FALSE(unknown.err.empty());
  CHECK(run_twocs({"run", "--quiet", "--verbose"}).code == 2);
}

TEST_CASE("bad input exits 2 with the location and the fix on stderr") {
  TempDir dir("bad-input");
  const auto workload = dir.file("broken.yaml");
  std::ofstream(workload) << "model:\n  layers: 2\n  hidden: 1024\n  heads: 16\n  vocab: 51200\n  seq_len: 1024\n"
                             "training:\n  global_batch: 8\n  micro_batch: 1\n  parallelism: {tensor: 3, pipeline: 1, "
                             "data: 1}\n";
  const auto r = run_twocs({"run", "--workload", workload});
  CHECK(r.code == 2);
  CHECK(r.err.find("broken.yaml:10:") != std::string::npos); // the tensor degree, line 10
  CHECK(r.err.find("fix:") != std::string::npos);
  CHECK(r.out.empty());

  const auto typo = run_twocs({"run", "--set", "model.hiden=2048"});
  CHECK(typo.code == 2);
  CHECK(typo.err.find("--set model.hiden=2048") != std::string::npos);
  CHECK(typo.err.find("hidden") != std::string::npos);

  const auto missing = run_twocs({"run", "--platform", dir.file("nowhere.yaml")});
  CHECK(missing.code == 2);
  CHECK(missing.err.find("nowhere.yaml") != std::string::npos);

  const auto too_big =
      run_twocs({"run", "--set", "training.parallelism.data=1000", "--set", "training.global_batch=2000"});
  CHECK(too_big.code == 2);
  CHECK(too_big.err.find("devices") != std::string::npos);
}

TEST_CASE("a plan that does not fit exits 3 with peak and capacity per stage, --ignore-memory runs it") {
  const std::vector<std::string> one_gpu{
      "run",   "--set",         "training.parallelism.tensor=1", "--set", "training.parallelism.data=1",
      "--set", "model.layers=4"};
  auto args = one_gpu;
  args.insert(args.end(), {"--set", "model.hidden=16384", "--set", "model.heads=128"});
  const auto r = run_twocs(args);
  CHECK(r.code == 3);
  CHECK(r.err.find("does not fit") != std::string::npos);
  CHECK(r.err.find("capacity 80 GiB") != std::string::npos);
  CHECK(r.err.find("stage") != std::string::npos);
  CHECK(r.err.find("over") != std::string::npos);
  args.push_back("--ignore-memory");
  args.push_back("--quiet");
  const auto forced = run_twocs(args);
  CHECK(forced.code == 0);
}

TEST_CASE("the trace holds exactly one event per simulated task and the JSON every contract field") {
  TempDir dir("outputs");
  const auto r = run_twocs(small({"--quiet", "--json", dir.file("s.json"), "--trace", dir.file("t.json"), "--report",
                                  dir.file("r.html"), "--dag", dir.file("d.dot")}));
  REQUIRE(r.code == 0);
  CHECK(r.out.empty());
  const auto summary = nlohmann::json::parse(read_text(dir.file("s.json")));
  for (const char* key :
       {"iteration_time_s", "world_size", "breakdown_s", "exposed_comm_by_kind_s", "comm_fraction",
        "exposed_comm_fraction", "model_flops_per_device_per_s", "mfu", "memory", "simulated_tasks", "wall_time_s"})
    CHECK_MESSAGE(summary.contains(key), key);
  CHECK(summary["world_size"] == 4);
  const auto trace = nlohmann::json::parse(read_text(dir.file("t.json")));
  std::size_t complete_events = 0;
  for (const auto& event : trace["traceEvents"]) complete_events += event["ph"] == "X" ? 1 : 0;
  CHECK(complete_events == summary["simulated_tasks"].get<std::size_t>());
  CHECK(read_text(dir.file("r.html")).find("<svg") != std::string::npos);
  CHECK(read_text(dir.file("d.dot")).rfind("digraph", 0) == 0);
}

TEST_CASE("the same inputs give byte-identical outputs") {
  TempDir dir("determinism");
  REQUIRE(run_twocs(small({"--quiet", "--trace", dir.file("a.json"), "--dag", dir.file("a.dag.json")})).code == 0);
  REQUIRE(run_twocs(small({"--quiet", "--trace", dir.file("b.json"), "--dag", dir.file("b.dag.json")})).code == 0);
  CHECK(read_text(dir.file("a.json")) == read_text(dir.file("b.json")));
  CHECK(read_text(dir.file("a.dag.json")) == read_text(dir.file("b.dag.json")));
}

TEST_CASE("an output that cannot be written is bad input and leaves no file behind") {
  TempDir dir("unwritable");
  const auto target = dir.file("missing-directory/summary.json");
  const auto r = run_twocs(small({"--quiet", "--json", target}));
  CHECK(r.code == 2);
  CHECK(r.err.find("missing-directory") != std::string::npos);
  CHECK_FALSE(fs::exists(target));
  CHECK(fs::is_empty(dir.path));
}
