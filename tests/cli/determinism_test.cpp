// Determinism and isolation of simulations in one process: twocs resets SimGrid's clock
// through a private symbol to run several simulations in a process, so a run must see no
// state left by an earlier one. Two different scenarios run A, B, A, B in one process, and B
// also alone in a fresh process (the real program); every output must be byte-identical
// between the runs of one scenario (the JSON up to wall_time_s, the one measured field).
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_capture.hpp"

namespace {

using twocs::test::read_text;
using twocs::test::TempDir;

struct Outputs {
  std::string json; // without wall_time_s
  std::string trace;
  std::string dag;
  std::string table;
};

/// Scenario A: tensor and data parallelism on one node.
std::vector<std::string> scenario_a() {
  return {"--set", "model.layers=2",
          "--set", "model.hidden=1024",
          "--set", "model.heads=16",
          "--set", "model.seq_len=1024",
          "--set", "training.global_batch=4",
          "--set", "training.micro_batch=1",
          "--set", "training.parallelism.tensor=2",
          "--set", "training.parallelism.data=2"};
}

/// Scenario B: a different model, a pipeline across two nodes, a slower network.
std::vector<std::string> scenario_b() {
  return {"--set", "model.layers=4",
          "--set", "model.hidden=768",
          "--set", "model.heads=12",
          "--set", "model.seq_len=512",
          "--set", "training.global_batch=8",
          "--set", "training.micro_batch=2",
          "--set", "training.parallelism.tensor=4",
          "--set", "training.parallelism.pipeline=2",
          "--set", "training.parallelism.data=2",
          "--set", "cluster.network.bandwidth=50GB/s"};
}

std::vector<std::string> output_flags(const TempDir& dir, const std::string& tag) {
  return {"--json", dir.file(tag + ".json"),    "--trace", dir.file(tag + ".trace.json"),
          "--dag",  dir.file(tag + ".dag.json")};
}

Outputs read_outputs(const TempDir& dir, const std::string& tag, std::string table) {
  auto summary = nlohmann::json::parse(read_text(dir.file(tag + ".json")));
  REQUIRE(summary.contains("wall_time_s"));
  summary.erase("wall_time_s");
  return {summary.dump(1), read_text(dir.file(tag + ".trace.json")), read_text(dir.file(tag + ".dag.json")),
          std::move(table)};
}

/// Runs a scenario in this process and returns its outputs.
Outputs run_in_process(const std::vector<std::string>& scenario, const TempDir& dir, const std::string& tag) {
  std::vector<std::string> args{"run"};
  args.insert(args.end(), scenario.begin(), scenario.end());
  const auto flags = output_flags(dir, tag);
  args.insert(args.end(), flags.begin(), flags.end());
  const auto r = twocs::test::run_command_line(args);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  return read_outputs(dir, tag, r.out);
}

/// The summary table minus its wall-time line, which is measured.
std::string without_wall_time(const std::string& table) {
  std::string kept;
  std::size_t start = 0;
  while (start < table.size()) {
    const std::size_t end = std::min(table.find('\n', start), table.size());
    const std::string line = table.substr(start, end - start);
    if (line.find("wall") == std::string::npos) kept += line + '\n';
    start = end + 1;
  }
  return kept;
}

void check_same(const Outputs& a, const Outputs& b) {
  CHECK(a.json == b.json);
  CHECK(a.trace == b.trace);
  CHECK(a.dag == b.dag);
  CHECK(without_wall_time(a.table) == without_wall_time(b.table));
}

} // namespace

TEST_CASE("different scenarios in either order in one process give byte-identical outputs") {
  TempDir dir("order");
  const Outputs a1 = run_in_process(scenario_a(), dir, "a1");
  const Outputs b1 = run_in_process(scenario_b(), dir, "b1");
  const Outputs a2 = run_in_process(scenario_a(), dir, "a2");
  const Outputs b2 = run_in_process(scenario_b(), dir, "b2");
  REQUIRE(a1.json != b1.json); // the two scenarios differ, so a leak between them would show
  check_same(a1, a2);          // A fresh, A after B
  check_same(b1, b2);          // B after A, B after B and A
}

TEST_CASE("a scenario run after another in one process equals the same scenario alone in a fresh process") {
  TempDir dir("fresh");
  (void)run_in_process(scenario_a(), dir, "warm-up");
  const Outputs after = run_in_process(scenario_b(), dir, "after");
  std::string command = std::string("'") + TWOCS_PROGRAM + "' run --quiet";
  for (const auto& arg : scenario_b()) command += " '" + arg + "'";
  for (const auto& arg : output_flags(dir, "alone")) command += " '" + arg + "'";
  REQUIRE(std::system(command.c_str()) == 0);
  const Outputs alone = read_outputs(dir, "alone", after.table);
  CHECK(after.json == alone.json);
  CHECK(after.trace == alone.trace);
  CHECK(after.dag == alone.dag);
}
