// `twocs run --replay` (analysis/steady_state.hpp): the replayed run reports what simulating every
// micro-batch does, says so in its summary and table, and is not chosen by `auto` for a small
// run, a traced one, one it would not halve or unfolded replicas at their own speeds; a bad value
// names the flag.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <twocs/config/scenario_loader.hpp>
#include <twocs/cost/make_cost_model.hpp>

#include "cli/cli_capture.hpp"
#include "cli/replay_policy.hpp"

namespace {

using twocs::test::contains;
using twocs::test::run_command_line;

/// GPT-3 13B's shape at 8 layers, t 8, p 4, d 2, 48 micro-batches of 2 per replica on 8 DGX A100
/// nodes, without speed variation (tests/analysis/steady_state_test.cpp replays replicas at their
/// own speeds).
std::vector<std::string> plan(const std::string& replay, const std::string& json) {
  std::vector<std::string> args{"run", "--ignore-memory", "--fold", "off", "--replay", replay, "--json", json};
  for (const char* set : {"model.layers=8", "training.parallelism.pipeline=4", "training.parallelism.data=2",
                          "training.global_batch=192", "cluster.nodes=8", "device.speed_variation.spread=0"})
    args.insert(args.end(), {"--set", set});
  args.insert(args.end(), {"--platform", twocs::test::source_file("platforms/dgx-a100-80gb.yaml")});
  return args;
}

nlohmann::json summary_of(const std::string& replay, twocs::test::TempDir& dir, std::string* table = nullptr) {
  const auto json = dir.file(replay + ".json");
  const auto result = run_command_line(plan(replay, json));
  REQUIRE(result.code == 0);
  if (table) *table = result.out;
  return nlohmann::json::parse(twocs::test::read_text(json));
}

} // namespace

TEST_CASE("--replay on reports the iteration of --replay off from fewer micro-batches, and says so") {
  twocs::test::TempDir dir("replay");
  std::string table;
  const auto on = summary_of("on", dir, &table);
  const auto off = summary_of("off", dir);
  const auto& r = on["approximations"]["replay"];
  CHECK(r["replayed"] == true);
  CHECK(r["micro_batches"] == 48);
  CHECK(r["simulated_micro_batches"] == 3 * 4 + 3); // 1F1B over 4 stages
  CHECK(r["period_micro_batches"] == 1);
  CHECK(on["simulated_tasks"].get<double>() < 0.5 * off["simulated_tasks"].get<double>());
  CHECK(on["iteration_time_s"].get<double>() == doctest::Approx(off["iteration_time_s"].get<double>()).epsilon(1e-9));
  for (const char* part : {"compute", "exposed_comm", "overlapped_comm", "idle"})
    CHECK(on["breakdown_s"][part].get<double>() ==
          doctest::Approx(off["breakdown_s"][part].get<double>()).epsilon(1e-9).scale(1e-3));
  CHECK(on["mfu"].get<double>() == doctest::Approx(off["mfu"].get<double>()).epsilon(1e-9));
  CHECK(contains(table, "steady state replayed: 15 of 48 micro-batches simulated, 33 periods of"));
  CHECK(off["approximations"]["replay"]["replayed"] == false);
  CHECK(off["approximations"]["replay"]["reason"] == "--replay off");
  CHECK(off["approximations"]["replay"]["simulated_micro_batches"] == 48);
}

TEST_CASE("--replay on refuses replicas that run at their own paces and simulates every micro-batch") {
  // Speed variation as shipped: each device its own draw, the two replicas meet only at the end.
  twocs::test::TempDir dir("replay-paces");
  auto args = plan("on", dir.file("on.json"));
  const auto spread = std::find(args.begin(), args.end(), "device.speed_variation.spread=0");
  REQUIRE(spread != args.end());
  args.erase(spread - 1, spread + 1);
  REQUIRE(run_command_line(args).code == 0);
  const auto on = nlohmann::json::parse(twocs::test::read_text(dir.file("on.json")));
  CHECK(on["approximations"]["replay"]["replayed"] == false);
  CHECK(contains(on["approximations"]["replay"]["reason"].get<std::string>(), "at their own paces"));
  CHECK(on["approximations"]["replay"]["simulated_micro_batches"] == 48);
}

TEST_CASE("--replay auto simulates every micro-batch of a run under 2M tasks") {
  twocs::test::TempDir dir("replay-auto");
  const auto json = dir.file("auto.json");
  const auto result = run_command_line(plan("auto", json));
  REQUIRE(result.code == 0);
  const auto r = nlohmann::json::parse(twocs::test::read_text(json))["approximations"]["replay"];
  CHECK(r["replayed"] == false);
  CHECK(contains(r["reason"].get<std::string>(), "at most 2000000 tasks"));
}

TEST_CASE("--replay names what it accepts") {
  const auto result = run_command_line({"run", "--replay", "sometimes"});
  CHECK(result.code == 2);
  CHECK(contains(result.err, "--replay: 'sometimes' is not a replay mode; it accepts auto, on or off"));
  CHECK(contains(result.err, "fix: pass --replay auto"));
}

TEST_CASE("--replay auto leaves out runs it would not halve, traced runs and unfolded replicas at their own speeds") {
  // The default 13B with 4 stages and 64 micro-batches per replica: 15 of them would run.
  const auto scenario = twocs::config::load_scenario(
      {std::nullopt,
       twocs::test::source_file("platforms/dgx-a100-80gb.yaml"),
       {"training.parallelism.pipeline=4", "training.parallelism.data=2", "training.global_batch=256",
        "cluster.nodes=8", "device.speed_variation.spread=0"}});
  const auto cost = twocs::cost::make_cost_model(scenario.cluster.device);
  const auto decide = [&](const twocs::cli::RunOptions& options, const twocs::config::Scenario& s) {
    return twocs::cli::decide_replay(options, s.workload.model, s.workload.plan, s.cluster, *cost);
  };
  twocs::cli::RunOptions options;
  options.fold_above_tasks = 1000; // this small plan stands for a large one
  options.fold = twocs::cli::FoldMode::off;
  const auto replays = decide(options, scenario);
  REQUIRE(replays.plan);
  CHECK(replays.plan->simulated == 15);
  options.trace = "trace.json";
  CHECK_FALSE(decide(options, scenario).plan);
  CHECK(contains(decide(options, scenario).reason, "a trace, report or DAG"));
  options.trace.reset();
  auto varied = scenario;
  varied.cluster.device.speed_variation.spread = 0.015;
  CHECK(contains(decide(options, varied).reason, "at their own paces"));
  options.fold = twocs::cli::FoldMode::on; // folded, every replica takes the same expected slowdown
  CHECK(decide(options, varied).plan);
  auto short_plan = scenario;
  short_plan.workload.plan.global_batch = 96; // 24 micro-batches of 2: 15 is more than half
  CHECK(contains(decide(options, short_plan).reason, "replay would run 15 of 24"));
  options.replay = twocs::cli::ReplayMode::on;
  CHECK(decide(options, short_plan).plan);
}
