// `twocs validate` on Megatron-LM's MoE-layer performance baselines (workloads/validation/
// moe-layers.yaml): every row within 0.5 points of its pinned signed error, so that no row moves
// unnoticed. These are pins, not accuracy: issue 27 asks for 10%, and docs/validation.md ("MoE
// layers") gives what separates twocs from the measurements.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/validation_runs.hpp"

namespace {

/// Today's signed errors of the MoE block's forward and backward (2026-12-04, when the rows were
/// added): the BF16 DeepSeek proxy within -15% .. +13%, the BF16 Mixtral proxy 16-31% fast, every
/// FP8 row fast (2-47%).
const std::map<std::string, double> errors = {
    {"moe-perf-deepseek-a2a-tp1ep8-bf16 forward", -0.1495},
    {"moe-perf-deepseek-a2a-tp1ep8-bf16 backward", 0.0341},
    {"moe-perf-deepseek-a2a-tp1ep8-fp8 forward", -0.3630},
    {"moe-perf-deepseek-a2a-tp1ep8-fp8 backward", -0.1605},
    {"moe-perf-deepseek-deepep-tp1ep8-bf16 forward", -0.0528},
    {"moe-perf-deepseek-deepep-tp1ep8-bf16 backward", 0.0941},
    {"moe-perf-deepseek-deepep-tp1ep8-fp8 forward", -0.3083},
    {"moe-perf-deepseek-deepep-tp1ep8-fp8 backward", -0.1203},
    {"moe-perf-deepseek-hybridep-tp1ep8-bf16 forward", -0.0016},
    {"moe-perf-deepseek-hybridep-tp1ep8-bf16 backward", 0.1265},
    {"moe-perf-deepseek-hybridep-tp1ep8-fp8 forward", -0.1883},
    {"moe-perf-deepseek-hybridep-tp1ep8-fp8 backward", -0.0156},
    {"moe-perf-mixtral-a2a-tp1ep8-bf16 forward", -0.2597},
    {"moe-perf-mixtral-a2a-tp1ep8-bf16 backward", -0.1622},
    {"moe-perf-mixtral-a2a-tp1ep8-fp8 forward", -0.4262},
    {"moe-perf-mixtral-a2a-tp1ep8-fp8 backward", -0.3351},
    {"moe-perf-mixtral-deepep-tp1ep8-bf16 forward", -0.3121},
    {"moe-perf-mixtral-deepep-tp1ep8-bf16 backward", -0.1803},
    {"moe-perf-mixtral-deepep-tp1ep8-fp8 forward", -0.4734},
    {"moe-perf-mixtral-deepep-tp1ep8-fp8 backward", -0.3554},
    {"moe-perf-mixtral-hybridep-tp1ep8-bf16 forward", -0.2657},
    {"moe-perf-mixtral-hybridep-tp1ep8-bf16 backward", -0.1684},
    {"moe-perf-mixtral-hybridep-tp1ep8-fp8 forward", -0.4165},
    {"moe-perf-mixtral-hybridep-tp1ep8-fp8 backward", -0.3304},
};

constexpr double margin = 0.005;

} // namespace

TEST_CASE("every MoE layer row stays within 0.5 points of its pinned signed error (validation suite)") {
  const auto result = twocs::test::validate_suite("moe-layers.yaml", {}, "auto");
  twocs::test::print_rows(result);
  REQUIRE(result["runs"].size() == errors.size());
  for (const auto& row : result["runs"]) {
    const std::string name = row["name"].get<std::string>();
    INFO(name);
    REQUIRE(errors.count(name) == 1);
    CHECK(row["kind"].get<std::string>() == "layer");
    CHECK(std::fabs(row["error"].get<double>() - errors.at(name)) <= margin);
  }
  CHECK(std::fabs(result["layer"]["mean_abs_error"].get<double>() - 0.2208) <= margin);
}
