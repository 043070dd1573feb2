// The Blackwell training-shape rule for dgx-b200's GEMM efficiencies (docs/operator-models.md,
// section 6): the efficiency at which the formula's time for the twelve GEMMs of one transformer
// layer at training shapes equals the time Transformer Engine's own GEMM benchmark measured for
// them on a B300 (NVIDIA/TransformerEngine docs/examples/gemm_profiling/gemm_profiling.rst at
// 1609c890e, 2026-06-01, "Worked Example: 5B Model on B300": benchmarks/gemm/benchmark_gemm.py,
// 5 s of sustained GEMMs to settle the clocks, then 10 warm-up and 100 timed runs per shape with
// CUDA events). The HGX B300 has B200's dense tensor peaks (2.25 PFLOP/s bf16, 4.5 FP8; G.
// Lockwood's B300 page, from NVIDIA's HGX B300 figures) at a higher power limit, so B200 sustains
// no more than these rates.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <twocs/cost/kernel_cost_model.hpp>

#include "support/catalogue_platform.hpp"

using namespace twocs;

namespace {

// The benchmark's model config: hidden 4096, MLP 16384, 32 heads (QKV 12288), 31 x 512 tokens.
constexpr std::int64_t tokens = 15872, hidden = 4096, qkv = 12288, mlp = 16384;

/// m x n x k of the layer's forward, dgrad and wgrad GEMMs (benchmark_gemm.py,
/// compute_gemm_shapes: Fprop (M, K, N), Dgrad (M, N, K), Wgrad (K, M, N) as M x K x N).
std::vector<model::GemmShape> layer_gemms() {
  const std::int64_t in[] = {hidden, hidden, hidden, mlp};
  const std::int64_t out[] = {qkv, hidden, mlp, hidden};
  std::vector<model::GemmShape> gemms;
  for (int i = 0; i < 4; ++i) {
    gemms.push_back({tokens, out[i], in[i], 1}); // fprop
    gemms.push_back({tokens, in[i], out[i], 1}); // dgrad
    gemms.push_back({in[i], out[i], tokens, 1}); // wgrad: the tokens are the contraction
  }
  return gemms;
}

/// The formula's time for the layer's twelve GEMMs, in ms, on `device` with its measured rows set aside.
double layer_ms(const hardware::DeviceSpec& device, model::Dtype dtype) {
  const auto formula = testing::formula_model(device);
  double ms = 0;
  for (const auto& g : layer_gemms()) ms += formula.duration(testing::gemm_op(g.m, g.n, g.k, dtype)).value() * 1e3;
  return ms;
}

/// The efficiency (bf16's, or FP8's) at which the formula takes `measured_ms` for the layer.
double efficiency_for(hardware::DeviceSpec device, model::Dtype dtype, double measured_ms) {
  double low = 0.3, high = 1.0; // the layer's time falls as the efficiency rises
  for (int i = 0; i < 40; ++i) {
    const double mid = (low + high) / 2;
    if (dtype == model::Dtype::fp8)
      device.roofline.fp8_gemm_efficiency = mid;
    else
      device.roofline.gemm_efficiency = mid;
    (layer_ms(device, dtype) > measured_ms ? low : high) = mid;
  }
  return (low + high) / 2;
}

// Per-layer GEMM time on the B300, ms. bf16 (torch.matmul) was run twice, in the autocast and the
// pre-quantized runs of the same config: 12.758 and 13.102. FP8 current scaling, pre-quantized
// (tex.generic_gemm on FP8 operands with per-tensor scales, fast accumulation, bf16 out): 6.812.
constexpr double b300_bf16_ms = (12.758 + 13.102) / 2;
constexpr double b300_fp8_ms = 6.812;

/// Maximum achievable matmul TFLOP/s, one benchmark for the three Blackwell parts (Bekman, Machine
/// Learning Engineering, compute/accelerator/README.md at 744d01e, the MAMF tables: mamf-finder.py,
/// the best of a sweep of shapes, the L2 cleared between runs).
struct Mamf {
  double bf16, fp8;
};
constexpr Mamf b300_mamf{1769.0, 3353.3};  // torch 2.9.1 + CUDA 13.0
constexpr Mamf b200_mamf{1745.0, 3432.5};  // torch 2.7.1 + CUDA 12.8
constexpr Mamf gb200_mamf{1822.0, 3615.6}; // torch 2.10.0.dev20250916 + CUDA 13.0

/// The rule's target on a Blackwell part: the B300's measured layer, scaled by how much faster
/// the part's best matmul runs than the B300's in the same benchmark.
double target_ms(double b300_ms, double b300, double part) { return b300_ms * b300 / part; }

void check_rule(const std::string& platform, const Mamf& mamf) {
  CAPTURE(platform);
  const auto device = testing::catalogue_device(platform);
  const double bf16_ms = target_ms(b300_bf16_ms, b300_mamf.bf16, mamf.bf16);
  const double fp8_ms = target_ms(b300_fp8_ms, b300_mamf.fp8, mamf.fp8);
  const double bf16 = efficiency_for(device, model::Dtype::bf16, bf16_ms);
  const double fp8 = efficiency_for(device, model::Dtype::fp8, fp8_ms);
  MESSAGE(platform, ": layer ", bf16_ms, " / ", fp8_ms, " ms, derived efficiencies: bf16 ", bf16, ", fp8 ", fp8);
  CHECK(device.roofline.gemm_efficiency == doctest::Approx(bf16).epsilon(0.002));
  REQUIRE(device.roofline.fp8_gemm_efficiency.has_value());
  CHECK(*device.roofline.fp8_gemm_efficiency == doctest::Approx(fp8).epsilon(0.002));
  // The same layer as shipped: within 0.5% of the target, bf16 and FP8.
  CHECK(layer_ms(device, model::Dtype::bf16) == doctest::Approx(bf16_ms).epsilon(0.005));
  CHECK(layer_ms(device, model::Dtype::fp8) == doctest::Approx(fp8_ms).epsilon(0.005));
}

} // namespace

TEST_CASE("dgx-b200's GEMM efficiencies make the formula take the B300's measured layer at B200's MAMF") {
  check_rule("dgx-b200.yaml", b200_mamf);
}

TEST_CASE("gb200-nvl72's GEMM efficiencies make the formula take the B300's measured layer at GB200's MAMF") {
  check_rule("gb200-nvl72.yaml", gb200_mamf);
}

TEST_CASE("vera-rubin-nvl144 carries GB200's GEMM efficiencies") {
  const auto gb200 = testing::catalogue_device("gb200-nvl72.yaml");
  const auto rubin = testing::catalogue_device("vera-rubin-nvl144.yaml");
  CHECK(rubin.roofline.gemm_efficiency == gb200.roofline.gemm_efficiency);
  CHECK(rubin.roofline.fp8_gemm_efficiency == gb200.roofline.fp8_gemm_efficiency);
}
