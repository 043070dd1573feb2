// The host's launch time: the platform's node.host_launch_time, which a workload's
// training.host.launch_time overrides (0: CUDA graphs); negative values are refused in place.
#include <doctest/doctest.h>

#include <twocs/config/scenario_loader.hpp>

#include "config/input_error_capture.hpp"

using namespace twocs;
using test::where;

TEST_CASE("node.host_launch_time is read, 0 by default") {
  CHECK(config::parse_platform({"p.yaml", test::small_platform}).node.host_launch_time.value() == 0);
  const auto set = config::parse_platform({"p.yaml", test::small_platform}, {"node.host_launch_time=13.5us"});
  CHECK(set.node.host_launch_time.value() == doctest::Approx(13.5e-6));
  std::string yaml = test::small_platform;
  yaml.insert(yaml.find("cluster:"), "  host_launch_time: 37us\n");
  CHECK(config::parse_platform({"p.yaml", yaml}).node.host_launch_time.value() == doctest::Approx(37e-6));
}

TEST_CASE("the workload's training.host.launch_time wins over the platform's, which fills it otherwise") {
  const config::InputText workload{"w.yaml", test::small_workload};
  const config::InputText platform{"p.yaml", test::small_platform};
  CHECK_FALSE(config::parse_workload(workload).plan.host.launch_time.has_value());
  const auto from_platform = config::load_scenario(workload, platform, {"node.host_launch_time=13.5us"});
  CHECK(from_platform.workload.plan.host.launch_time->value() == doctest::Approx(13.5e-6));
  const auto graphs =
      config::load_scenario(workload, platform, {"node.host_launch_time=13.5us", "training.host.launch_time=0us"});
  CHECK(graphs.workload.plan.host.launch_time->value() == 0);
  const auto own = config::load_scenario({"w.yaml", test::small_workload + "  host: {launch_time: 20us}\n"}, platform,
                                         {"node.host_launch_time=13.5us"});
  CHECK(own.workload.plan.host.launch_time->value() == doctest::Approx(20e-6));
  CHECK(config::load_scenario(workload, platform).workload.plan.host.launch_time->value() == 0);
}

TEST_CASE("a negative launch time is located and refused") {
  const auto node = test::platform_error(test::small_platform, {"node.host_launch_time=-2us"});
  CHECK(node.problem().find("must not be negative") != std::string::npos);
  const auto host = test::workload_error(test::small_workload + "  host: {launch_time: -1us}\n");
  CHECK(where(host) == "w.yaml:14:23"); // the value
  CHECK(host.problem().find("training.host.launch_time must not be negative") != std::string::npos);
  CHECK(host.fix().find("13.5us") != std::string::npos);
}
