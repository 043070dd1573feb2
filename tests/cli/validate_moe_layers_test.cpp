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
/// FP8 row fast (2-47%). GEMMs measured at training shapes on a GH100 (platforms/measured/, the
/// same day): BF16 Mixtral 16-31% -> 5-21% fast, BF16 DeepSeek -15% .. +13% -> -11% .. +19%, FP8
/// DeepSeek (then costed per-tensor) -35% .. +4%, FP8 Mixtral 28-46% fast; with the blockwise
/// recipe's measured block-scaled GEMMs (training.fp8_recipe), FP8 DeepSeek -30% .. +10%, FP8
/// Mixtral 17-39% fast; the mean 18.7% -> 15.7%. With Transformer Engine's quantization of the
/// experts' inputs and output gradients (one kernel per local expert) and the host's work per
/// kernel: FP8 DeepSeek -24% .. +16%, FP8 Mixtral 14-34% fast, BF16 unchanged; 15.7% -> 13.7%. With
/// Transformer Engine's FP8 padding copies (all-to-all dispatcher): the all-to-all FP8 rows, DeepSeek
/// -24% / -3% -> -15% / +4%, Mixtral -28% / -14% -> -25% / -13%; 13.7% -> 13.2%.
/// With DeepEP's fused permute-and-pad in FP8 (4 host synchronisations, its memsets): DeepSeek
/// -16% / +4% -> -11% / +6%, Mixtral -34% / -17% -> -30% / -17%; 13.2% -> 12.9%.
const std::map<std::string, double> errors = {
    {"moe-perf-deepseek-a2a-tp1ep8-bf16 forward", -0.1043},
    {"moe-perf-deepseek-a2a-tp1ep8-bf16 backward", 0.0923},
    {"moe-perf-deepseek-a2a-tp1ep8-fp8 forward", -0.1492},
    {"moe-perf-deepseek-a2a-tp1ep8-fp8 backward", 0.0432},
    {"moe-perf-deepseek-deepep-tp1ep8-bf16 forward", 0.0040},
    {"moe-perf-deepseek-deepep-tp1ep8-bf16 backward", 0.1614},
    {"moe-perf-deepseek-deepep-tp1ep8-fp8 forward", -0.1085},
    {"moe-perf-deepseek-deepep-tp1ep8-fp8 backward", 0.0576},
    {"moe-perf-deepseek-hybridep-tp1ep8-bf16 forward", 0.0582},
    {"moe-perf-deepseek-hybridep-tp1ep8-bf16 backward", 0.1958},
    {"moe-perf-deepseek-hybridep-tp1ep8-fp8 forward", -0.0102},
    {"moe-perf-deepseek-hybridep-tp1ep8-fp8 backward", 0.1603},
    {"moe-perf-mixtral-a2a-tp1ep8-bf16 forward", -0.1535},
    {"moe-perf-mixtral-a2a-tp1ep8-bf16 backward", -0.0507},
    {"moe-perf-mixtral-a2a-tp1ep8-fp8 forward", -0.2499},
    {"moe-perf-mixtral-a2a-tp1ep8-fp8 backward", -0.1273},
    {"moe-perf-mixtral-deepep-tp1ep8-bf16 forward", -0.2129},
    {"moe-perf-mixtral-deepep-tp1ep8-bf16 backward", -0.0713},
    {"moe-perf-mixtral-deepep-tp1ep8-fp8 forward", -0.3033},
    {"moe-perf-mixtral-deepep-tp1ep8-fp8 backward", -0.1660},
    {"moe-perf-mixtral-hybridep-tp1ep8-bf16 forward", -0.1598},
    {"moe-perf-mixtral-hybridep-tp1ep8-bf16 backward", -0.0577},
    {"moe-perf-mixtral-hybridep-tp1ep8-fp8 forward", -0.2657},
    {"moe-perf-mixtral-hybridep-tp1ep8-fp8 backward", -0.1379},
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
  CHECK(std::fabs(result["layer"]["mean_abs_error"].get<double>() - 0.1292) <= margin);
}
