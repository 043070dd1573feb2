// --collective-lowering: coarse ring collectives (one transfer per ring link) against the
// step-by-step ring in whole runs, contended ones included; the summary names the choice.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_capture.hpp"

using namespace twocs::test;

namespace {

nlohmann::json run_json(std::vector<std::string> args, const std::string& lowering, const TempDir& dir) {
  const std::string out = dir.file("summary-" + lowering + ".json");
  args.insert(args.begin(), {"run", "--quiet", "--json", out, "--collective-lowering", lowering});
  const auto r = run_command_line(args);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  return nlohmann::json::parse(read_text(out));
}

/// Coarse within 1% of step by step in iteration time and in exposed and busy communication.
void check_within_one_percent(const std::vector<std::string>& args, const char* name) {
  const TempDir dir(name);
  const auto step = run_json(args, "step", dir);
  const auto coarse = run_json(args, "coarse", dir);
  CHECK(coarse["simulated_tasks"].get<double>() < step["simulated_tasks"].get<double>());
  CHECK(step["approximations"]["coarse_collectives"] == 0);
  CHECK(coarse["approximations"]["coarse_collectives"].get<int>() > 0);
  CHECK(coarse["approximations"]["collective_lowering"] == "coarse");
  for (const char* key : {"iteration_time_s", "comm_busy_s"}) {
    CAPTURE(key);
    CHECK(coarse[key].get<double>() == doctest::Approx(step[key].get<double>()).epsilon(0.01));
  }
  for (const char* kind : {"tensor", "data", "pipeline"}) {
    CAPTURE(kind);
    // Exposure is a difference of times: compare it against the iteration, within 1% of it.
    const double iteration = step["iteration_time_s"].get<double>();
    CHECK(std::abs(coarse["exposed_comm_by_kind_s"][kind].get<double>() -
                   step["exposed_comm_by_kind_s"][kind].get<double>()) < 0.01 * iteration);
  }
}

} // namespace

TEST_CASE("coarse rings stay within 1% of step by step on the default scenario") {
  check_within_one_percent({}, "coarse-default");
}

TEST_CASE("coarse rings stay within 1% on a 2:1 oversubscribed fabric where data-parallel rings contend") {
  // The case (13B, t 8, p 2, d 8, 16 nodes, 2 per leaf switch, 2:1): the data-parallel
  // rings cross the leaf uplinks together, every device simulated.
  check_within_one_percent({"--platform", source_file("platforms/dgx-a100-80gb.yaml"), "--fold", "off", "--set",
                            "training.parallelism.pipeline=2", "--set", "training.parallelism.data=8", "--set",
                            "training.global_batch=16", "--set", "cluster.nodes=16", "--set",
                            "cluster.network.nodes_per_switch=2", "--set", "cluster.network.oversubscription=2",
                            "--set", "model.layers=8"},
                           "coarse-oversubscribed");
}

TEST_CASE("coarse rings stay within 1% folded (the mirrored member's two streams)") {
  check_within_one_percent({"--platform", source_file("platforms/dgx-a100-80gb.yaml"), "--fold", "on", "--set",
                            "training.parallelism.data=16", "--set", "training.global_batch=32", "--set",
                            "cluster.nodes=16", "--set", "model.layers=8"},
                           "coarse-folded");
}

TEST_CASE("auto, the default, lowers rings of 8 or more ranks coarse and says so in the table") {
  const auto r = run_command_line({"run"});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(contains(r.out, "coarse rings x"));
  CHECK(contains(r.out, "--collective-lowering auto)"));
  const auto step = run_command_line({"run", "--collective-lowering", "step"});
  CHECK(contains(step.out, "none (every device simulated)"));
}

TEST_CASE("a bad --collective-lowering is bad input naming the flag and the fix") {
  const auto r = run_command_line({"run", "--collective-lowering", "fast"});
  CHECK(r.code == 2);
  CHECK(contains(r.err, "--collective-lowering: 'fast' is not a lowering"));
  CHECK(contains(r.err, "step"));
}

TEST_CASE("collbench's coarse ring names itself and matches the step-by-step ring within 1%") {
  const TempDir dir("collbench-coarse");
  nlohmann::json rows[2];
  int i = 0;
  for (const char* lowering : {"step", "coarse"}) {
    const std::string out = dir.file(std::string(lowering) + ".json");
    const auto r = run_command_line({"collbench", "--platform", source_file("platforms/dgx-a100-80gb.yaml"), "--set",
                                     "cluster.nodes=2", "--devices", "16", "-b", "64MiB", "-e", "4GiB", "-f", "4",
                                     "--algorithm", "ring", "--collective-lowering", lowering, "--json", out});
    REQUIRE_MESSAGE(r.code == 0, r.err);
    rows[i++] = nlohmann::json::parse(read_text(out))["rows"];
  }
  REQUIRE(rows[0].size() == 4);
  REQUIRE(rows[1].size() == 4);
  for (std::size_t k = 0; k < 4; ++k) {
    CHECK(rows[1][k]["algorithm"] == "ring-coarse");
    CHECK(rows[1][k]["busbw_GBps"].get<double>() ==
          doctest::Approx(rows[0][k]["busbw_GBps"].get<double>()).epsilon(0.01));
  }
}
