// A workload's top-level `platform: PATH` (interface.md, "Added for the next round"): the platform
// `twocs run` uses when no --platform is given, resolved against the workload file's folder.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <twocs/config/scenario_loader.hpp>

#include "config/input_error_capture.hpp"
#include "support/scratch_dir.hpp"

using namespace twocs;
using test::ScratchDir;
using test::where;

namespace {

/// test::small_platform under another name, to tell which platform file was read.
std::string platform_named(const std::string& name) {
  std::string text = test::small_platform;
  return text.replace(text.find("name: tiny"), 10, "name: " + name);
}

} // namespace

TEST_CASE("a workload's platform: key names the platform run uses when --platform is absent") {
  const ScratchDir dir("twocs-platform-hint");
  (void)dir.write("platforms/written-for.yaml", platform_named("written-for"));
  const auto workload =
      dir.write("workloads/w.yaml", "platform: ../platforms/written-for.yaml\n" + test::small_workload);
  const auto scenario = config::load_scenario(config::ScenarioSources{workload, std::nullopt, {}});
  CHECK(scenario.cluster.name == "written-for");
  CHECK(std::filesystem::equivalent(scenario.platform_file, dir.path / "platforms/written-for.yaml"));
  CHECK(config::platform_named_by(config::read_input(workload)).has_value());
}

TEST_CASE("--platform wins over the workload's platform: key") {
  const ScratchDir dir("twocs-platform-hint-override");
  (void)dir.write("platforms/written-for.yaml", platform_named("written-for"));
  const auto other = dir.write("platforms/other.yaml", platform_named("other"));
  const auto workload =
      dir.write("workloads/w.yaml", "platform: ../platforms/written-for.yaml\n" + test::small_workload);
  const auto scenario = config::load_scenario(config::ScenarioSources{workload, other, {}});
  CHECK(scenario.cluster.name == "other");
  CHECK(scenario.platform_file == other.string());
}

TEST_CASE("without a platform: key the embedded default platform is used, and the key is optional") {
  const ScratchDir dir("twocs-platform-hint-none");
  const auto workload = dir.write("workloads/w.yaml", test::small_workload);
  CHECK_FALSE(config::platform_named_by(config::read_input(workload)).has_value());
  const auto scenario = config::load_scenario(config::ScenarioSources{workload, std::nullopt, {}});
  CHECK(scenario.platform_file.starts_with("<embedded platforms/"));
}

TEST_CASE("a platform: key naming no file is located at its value with the fix") {
  const ScratchDir dir("twocs-platform-hint-missing");
  const auto workload = dir.write("workloads/w.yaml", "platform: ../platforms/nowhere.yaml\n" + test::small_workload);
  const auto e = test::input_error_of([&] {
    (void)config::load_scenario(config::ScenarioSources{workload, std::nullopt, {}});
  });
  CHECK(where(e) == workload.string() + ":1:11");
  CHECK(e.problem().find("'../platforms/nowhere.yaml'") != std::string::npos);
  CHECK(e.problem().find("is not a file") != std::string::npos);
  CHECK(e.fix().find("--platform") != std::string::npos);
}

TEST_CASE("a platform: key that is not a path is refused at its value") {
  const auto e = test::input_error_of([] {
    (void)config::platform_named_by({"w.yaml", "platform: [a, b]\n" + test::small_workload});
  });
  CHECK(where(e) == "w.yaml:1:11");
  CHECK(e.problem() == "platform: expected the path of a platform file, got a list");
  const auto empty = test::input_error_of([] {
    (void)config::platform_named_by({"w.yaml", "platform:\n" + test::small_workload});
  });
  CHECK(where(empty) == "w.yaml:1:1");
}

TEST_CASE("every catalogue workload that names a platform runs on it as written") {
  const auto source = std::filesystem::path(TWOCS_SOURCE_DIR);
  int named = 0;
  for (const auto& entry : std::filesystem::directory_iterator(source / "workloads")) {
    if (entry.path().extension() != ".yaml") continue;
    CAPTURE(entry.path());
    const auto hint = config::platform_named_by(config::read_input(entry.path()));
    if (!hint) continue;
    ++named;
    const auto scenario = config::load_scenario(config::ScenarioSources{entry.path(), std::nullopt, {}});
    CHECK(std::filesystem::equivalent(scenario.platform_file, *hint));
    CHECK(scenario.workload.plan.world_size() <= scenario.cluster.device_count());
  }
  CHECK(named >= 8); // every model of the catalogue says what it was written for
}
