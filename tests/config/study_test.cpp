// Study files: expansion of cartesian and zipped axes, paths relative to the study, and
// errors located in the study file (bad axes, unknown keys, empty lists, misspelt keys).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include <twocs/config/study.hpp>

#include "config/input_error_capture.hpp"

using namespace twocs;
using test::where;

namespace {

/// A folder holding the small workload and platform under inputs/, for studies to name.
struct StudyDir {
  std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("twocs-study-test-" + std::to_string(::getpid()));
  StudyDir() {
    std::filesystem::create_directories(root / "inputs");
    std::ofstream(root / "inputs" / "w.yaml") << test::small_workload;
    std::ofstream(root / "inputs" / "p.yaml") << test::small_platform;
  }
  ~StudyDir() { std::filesystem::remove_all(root); }
};

const std::string base = "base:\n  workload: inputs/w.yaml\n  platform: inputs/p.yaml\n";

config::Study study(const std::string& text) {
  static const StudyDir dir;
  return config::parse_study({"s.yaml", text}, dir.root);
}

InputError study_error(const std::string& text) {
  return test::input_error_of([&] { (void)study(text); });
}

} // namespace

TEST_CASE("axes make a cartesian product, the last axis fastest, zipped keys advance together") {
  const auto s = study("study: demo\n" + base +
                       "  set: {cluster.nodes: 2}\n"
                       "axes:\n"
                       "  - {key: cluster.network.bandwidth, values: [10GB/s, 20GB/s]}\n"
                       "  - zip:\n"
                       "      - {key: model.layers, values: [2, 4, 8]}\n"
                       "      - {key: model.heads, values: [4, 8, 16]}\n");
  CHECK(s.name == "demo");
  CHECK(s.scenario_count() == 6);
  CHECK(s.axis_keys() == std::vector<std::string>{"cluster.network.bandwidth", "model.layers", "model.heads"});
  CHECK(s.scenario_values(0) == std::vector<std::string>{"10GB/s", "2", "4"});
  CHECK(s.scenario_values(4) == std::vector<std::string>{"20GB/s", "4", "8"});
  CHECK(s.scenario_overrides(5) == std::vector<std::string>{"cluster.nodes=2", "cluster.network.bandwidth=20GB/s",
                                                            "model.layers=8", "model.heads=16"});
  REQUIRE(s.workload);
  CHECK(s.workload->filename() == "w.yaml");
  CHECK(s.workload->parent_path().filename() == "inputs");
}

TEST_CASE("a study's scenario loads like twocs run with the same --set") {
  const auto s = study(base + "axes:\n  - {key: training.parallelism.data, values: [1, 2]}\n");
  const auto scenario = config::load_scenario(s.scenario_sources(0));
  CHECK(scenario.workload.plan.parallelism.data == 1);
}

TEST_CASE("a misspelt axis key is located at the key in the study file, with a suggestion") {
  const auto e = study_error(base + "axes:\n  - {key: model.hiden, values: [1024]}\n");
  CHECK(where(e) == "s.yaml:5:11");
  CHECK(e.problem().find("hiden") != std::string::npos);
  CHECK(e.fix().find("hidden") != std::string::npos);
}

TEST_CASE("a key outside both files is an error at the key") {
  const auto e = study_error(base + "axes:\n  - {key: modle.hidden, values: [1024]}\n");
  CHECK(where(e) == "s.yaml:5:11");
  CHECK(e.fix().find("model") != std::string::npos);
}

TEST_CASE("a value of the wrong type is located at the value") {
  const auto e = study_error(base + "axes:\n  - {key: cluster.network.bandwidth, values: [10GB/s, 25]}\n");
  CHECK(where(e) == "s.yaml:5:55");
}

TEST_CASE("an empty value list, an empty axes list and unequal zips are errors") {
  CHECK(where(study_error(base + "axes:\n  - {key: model.layers, values: []}\n")) == "s.yaml:5:33");
  CHECK(where(study_error(base + "axes: []\n")) == "s.yaml:4:7");
  const auto e = study_error(base + "axes:\n  - zip:\n    - {key: model.layers, values: [2, 4]}\n"
                                    "    - {key: model.heads, values: [4]}\n");
  CHECK(where(e) == "s.yaml:7:7");
  CHECK(e.problem().find("same") == std::string::npos);
  CHECK(e.fix().find("same number") != std::string::npos);
}

TEST_CASE("unknown keys in the study, an axis entry and base get suggestions") {
  const auto top = study_error(base + "axis:\n  - {key: model.layers, values: [2]}\n");
  CHECK(where(top) == "s.yaml:4:1");
  CHECK(top.fix().find("axes") != std::string::npos);
  const auto entry = study_error(base + "axes:\n  - {key: model.layers, value: [2]}\n");
  CHECK(where(entry) == "s.yaml:5:25");
  CHECK(entry.fix().find("values") != std::string::npos);
  const auto in_base = study_error("base:\n  workload: inputs/w.yaml\n  platfrom: inputs/p.yaml\naxes: []\n");
  CHECK(where(in_base) == "s.yaml:3:3");
}

TEST_CASE("a key given twice, zip beside key, and a bad base set are errors") {
  CHECK(study_error(base + "axes:\n  - {key: model.layers, values: [2]}\n  - {key: model.layers, values: [4]}\n")
            .problem()
            .find("twice") != std::string::npos);
  CHECK(where(study_error(base + "axes:\n  - {key: model.layers, values: [2], zip: []}\n")) == "s.yaml:5:5");
  const auto set = study_error("base:\n  workload: inputs/w.yaml\n  platform: inputs/p.yaml\n"
                               "  set: {cluster.nodez: 2}\naxes:\n  - {key: model.layers, values: [2]}\n");
  CHECK(where(set) == "s.yaml:4:9");
}

TEST_CASE("a missing base file is named") {
  const auto e = study_error("base: {workload: nowhere.yaml}\naxes:\n  - {key: model.layers, values: [2]}\n");
  CHECK(e.problem().find("nowhere.yaml") != std::string::npos);
}

TEST_CASE("what-if keys scale the platform, and generations compound the published trends") {
  const auto s = study(base + "axes:\n  - {key: whatif.generations, values: [0, 2]}\n"
                              "  - {key: whatif.network_latency_scale, values: [0.5]}\n");
  const auto now = config::load_scenario(s.scenario_sources(0)).cluster;
  const auto later = config::load_scenario(s.scenario_sources(1)).cluster;
  // Two generations: 3.0^2 FLOPS, 1.6^2 DRAM bandwidth, 1.4^2 interconnect (Gholami et al. 2024).
  CHECK(later.device.peak_flops.at(model::Dtype::bf16).value() ==
        doctest::Approx(9 * now.device.peak_flops.at(model::Dtype::bf16).value()));
  CHECK(later.device.memory_bandwidth.value() == doctest::Approx(2.56 * now.device.memory_bandwidth.value()));
  CHECK(later.network.link.bandwidth.value() == doctest::Approx(1.96 * now.network.link.bandwidth.value()));
  CHECK(later.node.interconnect.bandwidth.value() == doctest::Approx(1.96 * 100e9));
  CHECK(now.network.link.latency.value() == doctest::Approx(2.5e-6));
  CHECK(where(study_error(base + "axes:\n  - {key: whatif.compute_scal, values: [2]}\n")) == "s.yaml:5:11");
  CHECK(where(study_error(base + "axes:\n  - {key: whatif.compute_scale, values: [-1]}\n")) == "s.yaml:5:42");
}

TEST_CASE("network_bandwidth_scale scales the fabric's switch-to-switch links with the NICs") {
  const auto at = [](const char* scale) {
    return config::load_scenario(
               config::embedded_default_workload(), config::embedded_default_platform(),
               {"cluster.network.fabric_bandwidth=100GB/s", std::string("whatif.network_bandwidth_scale=") + scale})
        .cluster.network;
  };
  const auto now = at("1");
  const auto faster = at("2");
  CHECK(now.fabric_bandwidth.value() == doctest::Approx(100e9));
  CHECK(faster.fabric_bandwidth.value() == doctest::Approx(200e9));
  CHECK(faster.link.bandwidth.value() == doctest::Approx(2 * now.link.bandwidth.value()));
}

TEST_CASE("a platform or workload axis swaps the base file for each value, relative to the study") {
  static const StudyDir dir;
  std::ofstream(dir.root / "inputs" / "p2.yaml") << test::small_platform;
  const auto s = config::parse_study({"s.yaml", base + "axes:\n"
                                                       "  - {key: platform, values: [inputs/p.yaml, inputs/p2.yaml]}\n"
                                                       "  - {key: model.layers, values: [2]}\n"},
                                     dir.root);
  CHECK(s.axis_keys() == std::vector<std::string>{"platform", "model.layers"});
  CHECK(s.scenario_values(1) == std::vector<std::string>{"inputs/p2.yaml", "2"});
  CHECK(s.scenario_overrides(1) == std::vector<std::string>{"model.layers=2"}); // no --set for the file
  const auto sources = s.scenario_sources(1);
  REQUIRE(sources.platform);
  CHECK(*sources.platform == dir.root / "inputs" / "p2.yaml");
  REQUIRE(sources.workload);
  CHECK(sources.workload->filename() == "w.yaml"); // the base workload stays
  CHECK(config::load_scenario(sources).workload.model.layers == 2);
  const auto w = config::parse_study({"s.yaml", "axes:\n  - {key: workload, values: [inputs/w.yaml]}\n"}, dir.root);
  CHECK(*w.scenario_sources(0).workload == dir.root / "inputs" / "w.yaml");
}

TEST_CASE("a file axis's missing file is located at its value, and a value that is not a path is refused") {
  const auto missing = study_error(base + "axes:\n  - {key: platform, values: [inputs/p.yaml, nowhere.yaml]}\n");
  CHECK(where(missing) == "s.yaml:5:45");
  CHECK(missing.problem().find("nowhere.yaml") != std::string::npos);
  const auto mapping = study_error(base + "axes:\n  - {key: platform, values: [{a: 1}]}\n");
  CHECK(mapping.problem().find("not a file path") != std::string::npos);
}
