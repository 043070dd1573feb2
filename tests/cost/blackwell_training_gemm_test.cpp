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
double layer_ms(hardware::DeviceSpec device, model::Dtype dtype) {
  device.kernels.measured.clear();
  const cost::KernelCostModel formula(device);
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

} // namespace

TEST_CASE("dgx-b200's GEMM efficiencies make the formula take what Transformer Engine measured for a layer on B300") {
  const auto b200 = testing::catalogue_device("dgx-b200.yaml");
  const double bf16 = efficiency_for(b200, model::Dtype::bf16, b300_bf16_ms);
  const double fp8 = efficiency_for(b200, model::Dtype::fp8, b300_fp8_ms);
  MESSAGE("derived efficiencies: bf16 ", bf16, ", fp8 ", fp8);
  CHECK(b200.roofline.gemm_efficiency == doctest::Approx(bf16).epsilon(0.002));
  REQUIRE(b200.roofline.fp8_gemm_efficiency.has_value());
  CHECK(*b200.roofline.fp8_gemm_efficiency == doctest::Approx(fp8).epsilon(0.002));
  // The same layer as shipped: within 0.5% of the measurement, bf16 and FP8.
  CHECK(layer_ms(b200, model::Dtype::bf16) == doctest::Approx(b300_bf16_ms).epsilon(0.005));
  CHECK(layer_ms(b200, model::Dtype::fp8) == doctest::Approx(b300_fp8_ms).epsilon(0.005));
}
