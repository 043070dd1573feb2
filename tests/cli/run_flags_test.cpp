// `twocs run --fold` and `--max-tasks`: bad values are refused in the project's words (the flag,
// what it accepts, the fix; exit 2), good ones change what is simulated, and the task count a
// refusal names is the size of the DAG the plan lowers to.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_capture.hpp"

namespace {

using twocs::test::contains;
using twocs::test::run_command_line;

std::vector<std::string> small(std::vector<std::string> extra = {}) { return twocs::test::small_run(std::move(extra)); }

/// The number N in "... lowers to N tasks ...".
std::uint64_t tasks_named(const std::string& err) {
  const std::string marker = "lowers to ";
  const auto at = err.find(marker);
  REQUIRE(at != std::string::npos);
  return std::stoull(err.substr(at + marker.size()));
}

} // namespace

TEST_CASE("a bad --fold value names the flag, the accepted modes and the fix") {
  for (const char* value : {"maybe", "", "1", "yes"}) {
    CAPTURE(value);
    const auto r = run_command_line(small({"--fold", value}));
    CHECK(r.code == 2);
    CHECK(contains(r.err, "--fold"));
    CHECK(contains(r.err, "auto, on, off or shared"));
    CHECK(contains(r.err, "fix: pass --fold auto"));
    CHECK_FALSE(contains(r.err, "not in {")); // the parser's own wording
  }
}

TEST_CASE("a bad --max-tasks value names the flag, the accepted range and the fix") {
  for (const char* value : {"0", "-5", "abc", "1.5", "2e7", "20,000,000", "99999999999999999999999"}) {
    CAPTURE(value);
    const auto r = run_command_line(small({"--max-tasks", value}));
    CHECK(r.code == 2);
    CHECK(contains(r.err, "--max-tasks: '" + std::string(value) + "' is not a task count"));
    CHECK(contains(r.err, "a whole number from 1 to 18446744073709551615"));
    CHECK(contains(r.err, "fix: pass a positive whole number"));
    CHECK_FALSE(contains(r.err, "not in range"));
  }
}

TEST_CASE("fold modes are case-insensitive and folding simulates one device per stage") {
  twocs::test::TempDir dir("fold-modes");
  for (const char* mode : {"on", "ON", "off", "Auto"}) {
    CAPTURE(mode);
    const auto json = dir.file(std::string("summary-") + mode + ".json");
    const auto r = run_command_line(small({"--quiet", "--fold", mode, "--json", json}));
    REQUIRE(r.code == 0);
    const auto summary = nlohmann::json::parse(twocs::test::read_text(json));
    // This plan is far below the automatic threshold: only `on` folds it.
    const bool folded = std::string(mode) == "on" || std::string(mode) == "ON";
    CHECK(summary["simulated_devices"] == (folded ? 1 : 4));
  }
}

TEST_CASE("a plan over --max-tasks is refused with its exact task count, at the count it runs") {
  twocs::test::TempDir dir("max-tasks");
  for (const char* fold : {"off", "on"}) {
    CAPTURE(fold);
    const auto refused = run_command_line(small({"--fold", fold, "--max-tasks", "10"}));
    REQUIRE(refused.code == 2);
    CHECK(contains(refused.err, "more than the 10 twocs simulates under --max-tasks"));
    CHECK(contains(refused.err, "fix:"));
    const std::uint64_t tasks = tasks_named(refused.err);
    const auto dag = dir.file(std::string("dag-") + fold + ".json");
    const auto r =
        run_command_line(small({"--quiet", "--fold", fold, "--max-tasks", std::to_string(tasks), "--dag", dag}));
    REQUIRE(r.code == 0);
    CHECK(nlohmann::json::parse(twocs::test::read_text(dag))["tasks"].size() == tasks);
  }
}
