// `twocs run --plan-search` / `--plan-candidates` and the workload key training.parallelism.search:
// bad values are refused in the project's words, a search reports the plan it ran in the JSON
// summary, and a search where nothing fits is an out-of-memory exit.
#include <doctest/doctest.h>

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
  r = run_command_line(four_devices({"--plan-search", "smallest", "--set", "training.global_batch=3", "--set",
                                     "model.heads=3", "--set", "model.hidden=768"}));
  CHECK(r.code == 2);
  CHECK(contains(r.err, "is valid"));
}
