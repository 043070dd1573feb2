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
/// Timing the layer as the harness runs it (2026-12-05: no replica's gradient reduction under its
/// backward, and from the moment the last device begins it): the backward rows lose the slow side
/// that reduction gave them (DeepSeek BF16 +9% .. +20% -> -10% .. 0%); every row but one fast;
/// 12.9% -> 14.9%. With the experts' unfused probability weighting (GeLU experts: an fp32
/// product and a cast back each way, experts.py bias_act_func): BF16 Mixtral -16% .. -22% -> -11%
/// .. +5%, DeepSeek -12% .. +4% -> -8% .. +10%; FP8 -2% .. -31% -> -18% .. +5%; 14.9% -> 6.6%.
/// With the all-to-all dispatcher's sort of the received chunks by local expert and back (a pass
/// each way; DeepSeek's four local experts, Mixtral's one needs none): DeepSeek all-to-all BF16
/// -8% / -2% -> +2% / +5%, FP8 -12% / -7% -> -3% / 0%; 6.6% -> 5.9%.
/// The shared expert's own FP8 quantization of fc1's input (no norm fused into it): the FP8
/// DeepSeek forwards 0.5-0.7 points slower.
/// DeepEP's FP8 rows as the baselines' code ran them (fused_permute_pad off: the experts' padding
/// copies, none of the fused path's synchronisations): DeepSeek -6.5% / -4.4% -> +0.5% / +1.8%,
/// Mixtral -18.1% / -5.2% -> -18.8% / -4.0%; 5.9% -> 5.5%.
/// The H200's measured memory-bound kernels carried to the H100 by the GH100 rule (2026-12-06,
/// docs/operator-models.md): large GELU, dropout and add kernels faster, small norms slower;
/// DeepSeek rows 0.7-1.0 points faster, Mixtral 2-4 points; 5.5% -> 6.0%, max 18.8% -> 22.0%.
const std::map<std::string, double> errors = {
    {"moe-perf-deepseek-a2a-tp1ep8-bf16 forward", 0.0174},
    {"moe-perf-deepseek-a2a-tp1ep8-bf16 backward", 0.0436},
    {"moe-perf-deepseek-a2a-tp1ep8-fp8 forward", -0.0275},
    {"moe-perf-deepseek-a2a-tp1ep8-fp8 backward", -0.0082},
    {"moe-perf-deepseek-deepep-tp1ep8-bf16 forward", 0.0309},
    {"moe-perf-deepseek-deepep-tp1ep8-bf16 backward", 0.0578},
    {"moe-perf-deepseek-deepep-tp1ep8-fp8 forward", -0.0035},
    {"moe-perf-deepseek-deepep-tp1ep8-fp8 backward", 0.0092},
    {"moe-perf-deepseek-hybridep-tp1ep8-bf16 forward", 0.0903},
    {"moe-perf-deepseek-hybridep-tp1ep8-bf16 backward", 0.0891},
    {"moe-perf-deepseek-hybridep-tp1ep8-fp8 forward", 0.0359},
    {"moe-perf-deepseek-hybridep-tp1ep8-fp8 backward", 0.0374},
    {"moe-perf-mixtral-a2a-tp1ep8-bf16 forward", -0.0615},
    {"moe-perf-mixtral-a2a-tp1ep8-bf16 backward", 0.0236},
    {"moe-perf-mixtral-a2a-tp1ep8-fp8 forward", -0.1513},
    {"moe-perf-mixtral-a2a-tp1ep8-fp8 backward", -0.0464},
    {"moe-perf-mixtral-deepep-tp1ep8-bf16 forward", -0.1271},
    {"moe-perf-mixtral-deepep-tp1ep8-bf16 backward", 0.0015},
    {"moe-perf-mixtral-deepep-tp1ep8-fp8 forward", -0.2195},
    {"moe-perf-mixtral-deepep-tp1ep8-fp8 backward", -0.0756},
    {"moe-perf-mixtral-hybridep-tp1ep8-bf16 forward", -0.0641},
    {"moe-perf-mixtral-hybridep-tp1ep8-bf16 backward", 0.0161},
    {"moe-perf-mixtral-hybridep-tp1ep8-fp8 forward", -0.1569},
    {"moe-perf-mixtral-hybridep-tp1ep8-fp8 backward", -0.0547},
};

constexpr double margin = 0.005;

} // namespace

TEST_CASE("every MoE layer row stays within 0.5 points of its pinned signed error (validation suite)") {
  const auto result = twocs::test::validate_suite("moe-layers.yaml", {}, "auto");
  twocs::test::check_pinned_errors(result, errors, margin);
  for (const auto& row : result["runs"]) CHECK(row["kind"].get<std::string>() == "layer");
  CHECK(std::fabs(result["layer"]["mean_abs_error"].get<double>() - 0.0604) <= margin);
}

TEST_CASE("the Qwen3-shaped MoE layers stay within 0.5 points of their pinned signed errors (validation suite)") {
  // workloads/validation/moe-layers-qwen3.yaml (2026-12-05, when the rows were added): marin's copy
  // of the moe_perf harness at Qwen3-30B's and Qwen3-235B's shapes with DeepEP, 12.41 and 11.75 ms
  // forward plus backward. twocs gives 3.07 and 7.32 ms: the measured layers take about 12 ms
  // whatever their GPU work, the host's floor at 16 local experts that twocs does not have
  // (docs/validation.md, "MoE layers at Qwen3's shapes").
  const std::map<std::string, double> qwen3 = {
      {"marin-qwen3-30b-deepep-tp1ep8-bf16 forward+backward", -0.7572},
      {"marin-qwen3-235b-deepep-tp1ep8-bf16 forward+backward", -0.3817},
  };
  twocs::test::check_pinned_errors(twocs::test::validate_suite("moe-layers-qwen3.yaml", {}, "auto"), qwen3, margin);
}
