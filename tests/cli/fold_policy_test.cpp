// `--fold auto` never changes a result silently (issue "Performance and scale"): where replicas
// share links it folds only with their traffic simulated (--fold shared; a node ring not at all),
// `--fold on` warns where one is, and the JSON summary and the table say whether the run was
// folded and why.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <twocs/config/scenario_loader.hpp>

#include "cli/cli_capture.hpp"
#include "cli/fold_policy.hpp"

namespace {

using twocs::cli::decide_fold;
using twocs::cli::fold_hazard;
using twocs::cli::FoldMode;
using twocs::test::contains;
using twocs::test::run_command_line;

constexpr std::uint64_t threshold = 2'000'000;
constexpr std::uint64_t many_tasks = 50'000'000; // above the automatic threshold

/// The case: 13B (the default workload), t 8, p 2, d 8 on 16 DGX A100 nodes, 2 nodes per
/// leaf switch, 2:1 oversubscribed (folded 0.7636 s against 0.7673 s when folded silently).
twocs::config::Scenario oversubscribed(const std::string& ratio) {
  return twocs::config::load_scenario(
      {std::nullopt,
       twocs::test::source_file("platforms/dgx-a100-80gb.yaml"),
       {"training.parallelism.pipeline=2", "training.parallelism.data=8", "training.global_batch=16",
        "cluster.nodes=16", "cluster.network.nodes_per_switch=2", "cluster.network.oversubscription=" + ratio}});
}

TEST_CASE("auto folds the issue's 2:1 oversubscribed fat tree with the peers' traffic, on folds it without and "
          "says why") {
  const auto s = oversubscribed("2");
  const auto hazard = fold_hazard(s.cluster, s.workload.plan);
  REQUIRE(hazard.has_value());
  CHECK(contains(*hazard, "2:1 oversubscribed"));
  const auto automatic = decide_fold(FoldMode::automatic, s.cluster, s.workload.plan, many_tasks, threshold);
  CHECK(automatic.fold);
  CHECK(automatic.peer_traffic);
  CHECK_FALSE(automatic.inexact());
  CHECK(contains(automatic.reason, "the folded peers' traffic is simulated"));
  // Below the threshold auto simulates every device, as anywhere.
  CHECK_FALSE(decide_fold(FoldMode::automatic, s.cluster, s.workload.plan, threshold, threshold).fold);
  const auto on = decide_fold(FoldMode::on, s.cluster, s.workload.plan, many_tasks, threshold);
  CHECK(on.fold);
  CHECK_FALSE(on.peer_traffic);
  CHECK(on.inexact());
  const auto shared = decide_fold(FoldMode::shared, s.cluster, s.workload.plan, many_tasks, threshold);
  CHECK(shared.fold);
  CHECK(shared.peer_traffic);
  CHECK_FALSE(shared.inexact());
}

TEST_CASE("auto folds a non-blocking fat tree, and an oversubscribed one the job stays under one leaf of") {
  const auto blocking = oversubscribed("1");
  CHECK_FALSE(fold_hazard(blocking.cluster, blocking.workload.plan).has_value());
  const auto folded = decide_fold(FoldMode::automatic, blocking.cluster, blocking.workload.plan, many_tasks, threshold);
  CHECK(folded.fold);
  CHECK_FALSE(folded.inexact());
  CHECK_FALSE(decide_fold(FoldMode::automatic, blocking.cluster, blocking.workload.plan, threshold, threshold).fold);

  auto one_leaf = oversubscribed("4");
  one_leaf.cluster.network.nodes_per_switch = 16; // all 16 nodes under one leaf: no uplink carries traffic
  CHECK_FALSE(fold_hazard(one_leaf.cluster, one_leaf.workload.plan).has_value());
}

TEST_CASE("shared NICs make auto fold with the peers' traffic, node rings stop it, non-ring collectives do neither") {
  auto s = oversubscribed("1");
  auto nic = s.cluster;
  nic.network.devices_per_nic = 2;
  auto ring = s.cluster;
  ring.node.topology = twocs::hardware::NodeTopology::ring;
  auto tree = s.cluster;
  tree.network.collectives["data"] = "tree";
  auto ring_algorithm = s.cluster;
  ring_algorithm.network.collectives["data"] = "ring"; // the ring is mirrored member by member
  CHECK_FALSE(fold_hazard(ring_algorithm, s.workload.plan).has_value());
  // A tree is lowered whole under folding (tests/cli/collective_choice_test.cpp checks it is exact).
  CHECK_FALSE(fold_hazard(tree, s.workload.plan).has_value());
  for (const auto& cluster : {nic, ring}) CHECK(fold_hazard(cluster, s.workload.plan).has_value());
  CHECK(decide_fold(FoldMode::automatic, nic, s.workload.plan, many_tasks, threshold).peer_traffic);
  CHECK_FALSE(decide_fold(FoldMode::automatic, ring, s.workload.plan, many_tasks, threshold).fold);
}

TEST_CASE("off never folds, and a plan without replicas has nothing to fold") {
  const auto s = oversubscribed("1");
  CHECK_FALSE(decide_fold(FoldMode::off, s.cluster, s.workload.plan, many_tasks, threshold).fold);
  auto plan = s.workload.plan;
  plan.parallelism.tensor = 1;
  plan.parallelism.data = 1;
  CHECK_FALSE(decide_fold(FoldMode::on, s.cluster, plan, many_tasks, threshold).fold);
}

TEST_CASE("only auto's decisions by the task count say so: the count a replayed run qualifies") {
  const auto s = oversubscribed("1");
  const auto& plan = s.workload.plan;
  for (const auto tasks : {many_tasks, threshold}) {
    const auto automatic = decide_fold(FoldMode::automatic, s.cluster, plan, tasks, threshold);
    CHECK(automatic.by_task_count);
    CHECK(automatic.reason.find(std::to_string(tasks) + " tasks") != std::string::npos);
  }
  for (const auto mode : {FoldMode::on, FoldMode::off, FoldMode::shared})
    CHECK_FALSE(decide_fold(mode, s.cluster, plan, many_tasks, threshold).by_task_count);
}

/// Four devices (t 2, d 2) on two nodes of two, one node per leaf switch, 2:1 oversubscribed.
std::vector<std::string> small_oversubscribed(std::vector<std::string> extra) {
  std::vector<std::string> args{"run"};
  for (const char* set :
       {"model.layers=2", "model.hidden=1024", "model.heads=16", "model.seq_len=1024", "training.global_batch=4",
        "training.micro_batch=1", "training.parallelism.tensor=2", "training.parallelism.data=2", "node.devices=2",
        "cluster.nodes=2", "cluster.network.nodes_per_switch=1", "cluster.network.oversubscription=2"})
    args.insert(args.end(), {"--set", set});
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST_CASE("--fold on over shared links warns, and the summary names the approximation") {
  twocs::test::TempDir dir("fold-policy");
  const auto json = dir.file("on.json");
  const auto on = run_command_line(small_oversubscribed({"--fold", "on", "--json", json}));
  REQUIRE(on.code == 0);
  CHECK(contains(on.err, "folding replicas is approximate here"));
  CHECK(contains(on.out, "approximations"));
  CHECK(contains(on.out, "folded replicas (--fold on, although"));
  const auto summary = nlohmann::json::parse(twocs::test::read_text(json));
  CHECK(summary["approximations"]["folded"] == true);
  CHECK(contains(summary["approximations"]["reason"].get<std::string>(), "oversubscribed"));

  const auto off_json = dir.file("auto.json");
  const auto automatic = run_command_line(small_oversubscribed({"--json", off_json}));
  REQUIRE(automatic.code == 0);
  CHECK_FALSE(contains(automatic.err, "approximate"));
  CHECK(contains(automatic.out, "none (every device simulated)"));
  CHECK(nlohmann::json::parse(twocs::test::read_text(off_json))["approximations"]["folded"] == false);
}

} // namespace

TEST_CASE("ECMP makes auto fold with the peers' traffic once the job crosses leaf switches, and says why") {
  auto s = oversubscribed("1");
  REQUIRE_FALSE(fold_hazard(s.cluster, s.workload.plan).has_value()); // ideal routing: folds
  s.cluster.network.routing = twocs::hardware::Routing::ecmp;
  const auto hazard = fold_hazard(s.cluster, s.workload.plan);
  REQUIRE(hazard.has_value());
  CHECK(contains(*hazard, "ECMP"));
  const auto automatic = decide_fold(FoldMode::automatic, s.cluster, s.workload.plan, many_tasks, threshold);
  CHECK(automatic.peer_traffic);
  CHECK(contains(automatic.reason, "ECMP"));
  // Under one leaf switch the hash picks no uplink: folding stays exact.
  s.cluster.network.nodes_per_switch = 32;
  CHECK_FALSE(fold_hazard(s.cluster, s.workload.plan).has_value());
}

TEST_CASE("tori, dragonflies across routers and rails carrying cross-rail traffic are hazards to plain folding") {
  auto s = oversubscribed("1");
  s.cluster.network.topology = twocs::hardware::NetworkTopology::torus;
  s.cluster.network.torus_dimensions = {4, 4};
  CHECK(contains(fold_hazard(s.cluster, s.workload.plan).value_or(""), "torus"));
  s.cluster.network.topology = twocs::hardware::NetworkTopology::dragonfly;
  s.cluster.network.switches_per_group = 2;
  CHECK(contains(fold_hazard(s.cluster, s.workload.plan).value_or(""), "dragonfly"));
  s.cluster.network.topology = twocs::hardware::NetworkTopology::rail_fat_tree;
  CHECK_FALSE(fold_hazard(s.cluster, s.workload.plan).has_value()); // t = 8 fills a node: rail-aligned
  s.workload.plan.parallelism.tensor = 4;
  CHECK(contains(fold_hazard(s.cluster, s.workload.plan).value_or(""), "cross-rail"));
}
