// A platform's `provenance:` section (docs/platform-model.md, "Provenance"): every parameter a
// shipped platform sets has a statement, and a statement is as strictly checked as any key.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include <twocs/config/parameter_provenance.hpp>

#include "config/input_error_capture.hpp"

using namespace twocs;
using test::where;

namespace {

/// test::small_platform (12 lines) with a provenance section from line 13 on.
std::string with_provenance(const std::string& section) { return test::small_platform + "provenance:\n" + section; }

config::PlatformProvenance provenance_of(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  return config::read_platform_provenance({"p.yaml", yaml}, overrides);
}

const config::ParameterProvenance* find(const config::PlatformProvenance& p, std::string_view name) {
  for (const auto& s : p.parameters)
    if (s.parameter == name) return &s;
  return nullptr;
}

} // namespace

TEST_CASE("every parameter of every shipped platform states its class and source") {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(TWOCS_SOURCE_DIR) / "platforms")) {
    if (entry.path().extension() != ".yaml") continue; // platforms/measured/ holds profiles
    const std::string file = entry.path().filename().string();
    CAPTURE(file);
    const auto p = config::read_platform_provenance(config::read_input(entry.path()));
    CHECK(p.unstated().empty());
    CHECK(p.parameters.size() >= 10); // peaks, memory, operator model, links: at least these
    for (const auto& s : p.parameters) {
      CAPTURE(s.parameter);
      CHECK(s.source.size() > 10); // a citation, not a word
      if (s.kind == config::ProvenanceClass::derived) CHECK(!s.rule.empty());
      if (s.kind == config::ProvenanceClass::assumption) CHECK(!s.sensitivity.empty());
    }
    ++files;
  }
  CHECK(files >= 14);
}

TEST_CASE("a statement gives the parameter's class, source, value, and a user's platform may omit them") {
  const auto p = provenance_of(with_provenance(
      "  device.memory: {class: measurement, source: \"T1 datasheet, 16 GiB\"}\n"
      "  node.interconnect.bandwidth: {class: derived, source: \"4 links of 25 GB/s\", rule: \"links x rate\"}\n"
      "  cluster.network.latency: {class: assumption, source: \"a round figure\", sensitivity: \"none tested\"}\n"));
  const auto* memory = find(p, "device.memory");
  REQUIRE(memory != nullptr);
  CHECK(memory->kind == config::ProvenanceClass::measurement);
  CHECK(memory->value == "16GiB");
  CHECK(memory->source == "T1 datasheet, 16 GiB");
  CHECK(find(p, "node.interconnect.bandwidth")->rule == "links x rate");
  CHECK(find(p, "cluster.network.latency")->sensitivity == "none tested");
  CHECK(find(p, "device.peak_flops")->value == "{bf16: 100TFLOP/s, fp32: 10TFLOP/s}");
  // Set but not stated: listed, never refused (a user's own platform runs without a section).
  CHECK(p.unstated() == std::vector<std::string>{"device.peak_flops", "device.memory_bandwidth", "node.devices",
                                                 "node.interconnect.latency", "cluster.network.bandwidth"});
  CHECK(provenance_of(test::small_platform).unstated().size() == 8);
}

TEST_CASE("a parameter replaced by --set no longer carries the file's statement") {
  const auto p = provenance_of(with_provenance("  device.memory: {class: measurement, source: \"T1 datasheet\"}\n"),
                               {"device.memory=32GiB", "device.peak_flops.bf16=200TFLOP/s"});
  CHECK(find(p, "device.memory")->kind == config::ProvenanceClass::command_line);
  CHECK(find(p, "device.memory")->value == "32GiB");
  CHECK(find(p, "device.peak_flops")->kind == config::ProvenanceClass::command_line);
}

TEST_CASE("a bad provenance statement is an input error at its key with the fix") {
  const auto error = [](const std::string& section) { return test::platform_error(with_provenance(section)); };
  SUBCASE("an unknown class") {
    const auto e = error("  device.memory: {class: guess, source: \"x\"}\n");
    CHECK(where(e) == "p.yaml:14:26");
    CHECK(std::string(e.what()).find("measurement") != std::string::npos);
  }
  SUBCASE("no source") { CHECK(where(error("  device.memory: {class: measurement}\n")).starts_with("p.yaml:14:")); }
  SUBCASE("a derived value without its rule") {
    const auto e = error("  device.memory: {class: derived, source: \"datasheet\"}\n");
    CHECK(std::string(e.what()).find("rule") != std::string::npos);
  }
  SUBCASE("an assumption without its sensitivity") {
    const auto e = error("  device.memory: {class: assumption, source: \"a round figure\"}\n");
    CHECK(std::string(e.fix()).find("sensitivity") != std::string::npos);
  }
  SUBCASE("a rule on a measurement") {
    const auto e = error("  device.memory: {class: measurement, source: \"datasheet\", rule: \"x\"}\n");
    CHECK(where(e) == "p.yaml:14:60");
  }
  SUBCASE("a key that is not a parameter, with the nearest name") {
    const auto e = error("  device.memory_bandwith: {class: measurement, source: \"datasheet\"}\n");
    CHECK(where(e) == "p.yaml:14:3");
    CHECK(std::string(e.fix()).find("device.memory_bandwidth") != std::string::npos);
  }
  SUBCASE("a statement for a parameter the file does not set") {
    const auto e = error("  node.host_launch_time: {class: measurement, source: \"TE issue #2053\"}\n");
    CHECK(where(e) == "p.yaml:14:3");
    CHECK(std::string(e.what()).find("does not set") != std::string::npos);
  }
  SUBCASE("a section that is not a mapping") {
    CHECK(where(test::platform_error(test::small_platform + "provenance: [a]\n")).starts_with("p.yaml:13:"));
  }
  SUBCASE("an unknown key in a statement") {
    const auto e = error("  device.memory: {class: measurement, source: \"datasheet\", sourse: \"x\"}\n");
    CHECK(where(e) == "p.yaml:14:60");
  }
}
