// `twocs run --plan-search` / `--plan-candidates` and the workload key training.parallelism.search:
// bad values are refused in the project's words, a search reports the plan it ran in the JSON
// summary, and a search where nothing fits is an out-of-memory exit.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_capture.hpp"

namespace {

using twocs::test::contains;
using twocs::test::run_command_line;

/// small_run on one node of 4 devices, so that a search spreads over 4 devices.
std::vector<std::string> four_devices(std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"--set", "cluster.nodes=1", "--set", "node.devices=4"};
  args.insert(args.end(), extra.begin(), extra.end());
  return twocs::test::small_run(std::move(args));
}

} // namespace

TEST_CASE("bad --plan-search and --plan-candidates values name the flag, what it accepts and the fix") {
  auto r = run_command_line(four_devices({"--plan-search", "quickest"}));
  CHECK(r.code == 2);
  CHECK(contains(r.err, "--plan-search: 'quickest' is not a search objective"));
  CHECK(contains(r.err, "none, smallest or fastest"));
  for (const char* value : {"0", "-1", "two", "1.5"}) {
    CAPTURE(value);
    r = run_command_line(four_devices({"--plan-search", "fastest", "--plan-candidates", value}));
    CHECK(r.code == 2);
    CHECK(contains(r.err, "--plan-candidates"));
    CHECK(contains(r.err, "fix:"));
  }
  r = run_command_line(four_devices({"--set", "training.parallelism.search=quick"}));
  CHECK(r.code == 2);
  CHECK(contains(r.err, "training.parallelism.search=quick"));
}

TEST_CASE("--plan-search fastest simulates the candidates asked for and reports the plan it ran") {
  twocs::test::TempDir dir("plan-search");
  const auto json = dir.file("fastest.json");
  const auto r =
      run_command_line(four_devices({"--quiet", "--plan-search", "fastest", "--plan-candidates", "2", "--json", json}));
  REQUIRE(r.code == 0);
  const auto summary = nlohmann::json::parse(twocs::test::read_text(json));
  const auto& plan = summary["plan"];
  CHECK(plan["search"]["objective"] == "fastest");
  CHECK(plan["search"]["simulated"] == 2);
  CHECK(plan["search"]["fitting"].get<int>() >= 2);
  CHECK(plan["tensor"].get<int>() * plan["pipeline"].get<int>() * plan["data"].get<int>() == 4);
  CHECK(summary["world_size"] == 4);
}

TEST_CASE("the workload key chooses the smallest plan and the table says so") {
  const auto r = run_command_line(four_devices({"--set", "training.parallelism.search=smallest"}));
  REQUIRE(r.code == 0);
  CHECK(contains(r.out, "plan search             smallest: tensor 1 x pipeline 1 x data 4"));
  CHECK(contains(r.out, "0 simulated to choose"));
}

TEST_CASE("a plan search where no plan fits exits 3, where none is valid exits 2") {
  auto r = run_command_line(four_devices({"--plan-search", "smallest", "--set", "device.memory=100MB"}));
  CHECK(r.code == 3);
  CHECK(contains(r.err, "plan search: none of the"));
  CHECK(contains(r.err, "fits in device memory"));
  // Unfused attention: context parallelism (fused only) cannot take the devices that nothing else divides.
  r = run_command_line(
      four_devices({"--plan-search", "smallest", "--set", "training.global_batch=3", "--set", "model.heads=3", "--set",
                    "model.hidden=768", "--set", "training.attention=unfused"}));
  CHECK(r.code == 2);
  CHECK(contains(r.err, "is valid"));
}

TEST_CASE("twocs analyze analyses the plan a search chooses, by the closed form alone") {
  std::vector<std::string> args = four_devices({"--set", "training.parallelism.search=smallest"});
  args.front() = "analyze";
  const auto searched = run_command_line(args);
  REQUIRE(searched.code == 0);
  CHECK(contains(searched.out, "plan search (smallest, closed form)"));
  // The plan it names, written out, analyses to the same table.
  const auto chosen = searched.out.substr(searched.out.find("chose ") + 6);
  int t = 0, p = 0, d = 0, v = 0, b = 0;
  REQUIRE(std::sscanf(chosen.c_str(), "t %d x p %d x d %d, v %d, b %d", &t, &p, &d, &v, &b) == 5);
  CHECK(t * p * d == 4);
  std::vector<std::string> written = four_devices(
      {"--set", "training.parallelism.tensor=" + std::to_string(t), "--set",
       "training.parallelism.pipeline=" + std::to_string(p), "--set", "training.parallelism.data=" + std::to_string(d),
       "--set", "training.parallelism.virtual_stages=" + std::to_string(v), "--set",
       "training.micro_batch=" + std::to_string(b), "--set",
       "training.recompute=" +
           chosen.substr(chosen.find("recompute ") + 10, chosen.find('\n') - chosen.find("recompute ") - 10)});
  written.front() = "analyze";
  const auto direct = run_command_line(written);
  REQUIRE(direct.code == 0);
  CHECK(searched.out.substr(searched.out.find('\n') + 1) == direct.out);
}
