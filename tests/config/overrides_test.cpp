// --set KEY=VALUE: values parsed as YAML, applied before the strict checks, and errors that
// point into the --set argument itself.
#include <doctest/doctest.h>

#include <twocs/config/scenario_loader.hpp>

#include "config/input_error_capture.hpp"

using namespace twocs;
using test::platform_error;
using test::where;
using test::workload_error;

namespace {

config::Workload workload(const std::vector<std::string>& overrides) {
  return config::parse_workload({"w.yaml", test::small_workload}, overrides);
}

hardware::ClusterSpec platform(const std::vector<std::string>& overrides) {
  return config::parse_platform({"p.yaml", test::small_platform}, overrides);
}

} // namespace

TEST_CASE("overrides replace counts, booleans, quantities, lists and mappings") {
  const auto w = workload({"training.parallelism.data=1", "training.parallelism.sequence=true",
                           "training.parallelism.stage_layers=[1, 3]", "model.name=renamed"});
  CHECK(w.plan.parallelism.data == 1);
  CHECK(w.plan.parallelism.sequence);
  CHECK(w.plan.parallelism.stage_layers == std::vector<std::int64_t>{1, 3});
  CHECK(w.model.name == "renamed");

  const auto c = platform({"cluster.network.bandwidth=50GB/s", "device.peak_flops={bf16: 1PFLOP/s}", "name=other"});
  CHECK(c.network.link.bandwidth.value() == doctest::Approx(50e9));
  CHECK(c.device.peak(model::Dtype::bf16)->value() == doctest::Approx(1e15));
  CHECK_FALSE(c.device.peak(model::Dtype::fp32).has_value()); // the whole mapping was replaced
  CHECK(c.name == "other");
}

TEST_CASE("overrides create missing keys and intermediate mappings") {
  const auto w = workload({"model.kv_heads=4", "training.overlap.bucket_size=50MB"});
  CHECK(w.model.kv_heads == 4);
  CHECK(w.plan.overlap.bucket_size.value() == 50e6);
  CHECK(w.plan.overlap.dp_grad_reduce); // the rest of the created mapping keeps its defaults
}

TEST_CASE("the last override of a key wins") { CHECK(platform({"cluster.nodes=3", "cluster.nodes=5"}).nodes == 5); }

TEST_CASE("each file takes only the overrides of its own keys") {
  CHECK(workload({"cluster.nodes=3"}).model.layers == 4);
  const auto s = config::load_scenario({"w.yaml", test::small_workload}, {"p.yaml", test::small_platform},
                                       {"cluster.nodes=3", "model.layers=8"});
  CHECK(s.cluster.nodes == 3);
  CHECK(s.workload.model.layers == 8);
}

TEST_CASE("a platform read alone refuses a workload key instead of ignoring it") {
  // collbench, show platform and calibrate read no workload: a model.* or training.* --set there
  // would change nothing.
  for (const std::string key : {"model.layers=7", "training.parallelism.data=4"}) {
    CAPTURE(key);
    const auto e = platform_error(test::small_platform, {"cluster.nodes=3", key});
    CHECK(where(e) == "--set " + key + ":1:1");
    CHECK(e.problem().find("sets the workload, but this command reads only a platform") != std::string::npos);
    CHECK(e.fix().find("cluster.*") != std::string::npos);
  }
  CHECK(platform({"cluster.nodes=3", "whatif.compute_scale=2"}).nodes == 3);
}

TEST_CASE("overrides apply to the embedded default scenario") {
  const auto s = config::load_scenario(config::ScenarioSources{std::nullopt, std::nullopt, {"cluster.nodes=2"}});
  CHECK(s.cluster.nodes == 2);
}

TEST_CASE("an override with an unknown key points at that part of the key") {
  const auto e = workload_error(test::small_workload, {"training.parallelism.dta=4"});
  CHECK(where(e) == "--set training.parallelism.dta=4:1:22");
  CHECK(e.problem() == "unknown key 'dta' in training.parallelism");
  CHECK(e.fix() == "did you mean 'data'?");

  const auto root = workload_error(test::small_workload, {"trainig.parallelism.data=4"});
  CHECK(where(root) == "--set trainig.parallelism.data=4:1:1");
  CHECK(root.problem() ==
        "--set key 'trainig.parallelism.data' is in neither file: it must start with model, training, name, "
        "device, node, cluster, whatif");
  CHECK(root.fix() == "did you mean 'training'?");
}

TEST_CASE("an override with a bad value points at the value inside the --set argument") {
  const auto type = workload_error(test::small_workload, {"training.parallelism.data=four"});
  CHECK(where(type) == "--set training.parallelism.data=four:1:27");
  CHECK(type.problem() == "training.parallelism.data must be a whole number, got 'four'");

  const auto unit = platform_error(test::small_platform, {"cluster.network.bandwidth=50GX/s"});
  CHECK(where(unit) == "--set cluster.network.bandwidth=50GX/s:1:29");

  const auto bare = platform_error(test::small_platform, {"cluster.network.bandwidth=50"});
  CHECK(where(bare) == "--set cluster.network.bandwidth=50:1:27");
  CHECK(bare.problem() == "cluster.network.bandwidth needs a unit, e.g. '25GB/s'");

  const auto nested = platform_error(test::small_platform, {"device.peak_flops={bf16: 1PFLOP/s, fp32: 2}"});
  CHECK(where(nested) == "--set device.peak_flops={bf16: 1PFLOP/s, fp32: 2}:1:42");

  const auto syntax = workload_error(test::small_workload, {"model.layers=[1,"});
  CHECK(syntax.location()->file == "--set model.layers=[1,");
  CHECK(syntax.problem().find("YAML syntax error") == 0);
}

TEST_CASE("a validation error about an overridden value points at the override") {
  const auto e = workload_error(test::small_workload, {"training.parallelism.tensor=3"});
  CHECK(where(e) == "--set training.parallelism.tensor=3:1:29");
  CHECK(e.problem() == "model.heads (8) must be divisible by training.parallelism.tensor (3)");

  const auto world = test::input_error_of([] {
    (void)config::load_scenario({"w.yaml", test::small_workload}, {"p.yaml", test::small_platform},
                                {"training.parallelism={tensor: 2, pipeline: 2, data: 4}"});
  });
  CHECK(where(world) == "--set training.parallelism={tensor: 2, pipeline: 2, data: 4}:1:10");

  const auto missing = workload_error(test::small_workload, {"training.parallelism={tensor: 2}"});
  CHECK(where(missing) == "--set training.parallelism={tensor: 2}:1:10");
  CHECK(missing.problem() == "training.parallelism is missing the required key 'pipeline'");
}

TEST_CASE("a malformed override is an InputError located in the argument") {
  const auto no_equals = workload_error(test::small_workload, {"training.parallelism.data"});
  CHECK(where(no_equals) == "--set training.parallelism.data:1:1");
  CHECK(no_equals.problem() == "--set 'training.parallelism.data' has no '=' between key and value");
  CHECK(no_equals.fix() == "write KEY=VALUE, e.g. --set training.parallelism.data=4");

  const auto no_key = workload_error(test::small_workload, {"=4"});
  CHECK(where(no_key) == "--set =4:1:1");
  CHECK(no_key.problem() == "--set '=4' has no key before '='");

  const auto empty_part = workload_error(test::small_workload, {"training..data=4"});
  CHECK(where(empty_part) == "--set training..data=4:1:10");
  CHECK(empty_part.problem() == "--set key 'training..data' has an empty part");

  const auto below_scalar = workload_error(test::small_workload, {"model.layers.first=3"});
  CHECK(where(below_scalar) == "--set model.layers.first=3:1:14");
  CHECK(below_scalar.problem() == "cannot set 'first': 'model.layers' is the number 4, not a mapping");

  // A malformed override is reported even when the other file is being read.
  CHECK(where(platform_error(test::small_platform, {"model.layers"})) == "--set model.layers:1:1");
}
