// The catalogue's rule for `gemm_efficiency` (docs/operator-models.md, section 6): each platform
// file's best GEMM rate over the MAMF finder's grid of shapes is its device's published
// maximum achievable matmul FLOPS (Bekman, Machine Learning Engineering, accelerator chapter: the
// MAMF table, the best of a sweep of shapes), bf16 and FP8 apart, and no shape of the grid, the
// published best one included, runs faster. dgx-b200 and gb200-nvl72 follow the training-shape
// rule instead (blackwell_training_gemm_test.cpp), and their grids stay below the MAMF.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include <twocs/cost/gemm_timing.hpp>

#include "support/catalogue_platform.hpp"

using namespace twocs;

namespace {

/// The TFLOP/s the formula gives a GEMM of m x n x k in `dtype` on `device`.
double modelled_tflops(const hardware::DeviceSpec& device, std::int64_t m, std::int64_t n, std::int64_t k,
                       model::Dtype dtype) {
  const auto timing = cost::time_gemm(device, model::GemmShape{m, n, k, 1}, dtype);
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) / timing.compute.value() / 1e12;
}

/// The best TFLOP/s the formula gives over m, n, k in {256, 512, ..., 20480} (mamf-finder.py's
/// example range and step, stas00/ml-engineering compute/accelerator/benchmarks).
double grid_best_tflops(const hardware::DeviceSpec& device, model::Dtype dtype) {
  double best = 0;
  for (std::int64_t m = 256; m <= 20480; m += 256)
    for (std::int64_t n = 256; n <= 20480; n += 256)
      for (std::int64_t k = 256; k <= 20480; k += 256) best = std::max(best, modelled_tflops(device, m, n, k, dtype));
  return best;
}

} // namespace

TEST_CASE("each platform's best GEMM rate over the MAMF grid is its device's published MAMF, bf16 and FP8 apart "
          "(Blackwell's below it)") {
  struct Published {
    const char* platform;
    model::Dtype dtype;
    double mamf;          // TFLOP/s, Bekman's MAMF table
    std::int64_t m, n, k; // its best shape
    bool bound = false;   // the file follows another rule: MAMF bounds its grid from above
  };
  const Published published[] = {
      // B200: torch 2.7.1 + CUDA 12.8. Its file follows the training-shape rule since 2026-12-05
      // (blackwell_training_gemm_test.cpp), which stays below the MAMF everywhere on the grid.
      {"dgx-b200.yaml", model::Dtype::bf16, 1745, 1792, 16128, 3072, true},
      {"dgx-b200.yaml", model::Dtype::fp8, 3432.5, 15360, 4096, 3072, true},
      // GB200: torch 2.10.0.dev20250916 + CUDA 13.0. The training-shape rule since 2026-12-06.
      {"gb200-nvl72.yaml", model::Dtype::bf16, 1822, 4096, 9728, 2048, true},
      {"gb200-nvl72.yaml", model::Dtype::fp8, 3615.6, 19456, 5120, 1536, true},
      // H100 SXM (and H200, "the same"): torch 2.7 + CUDA 12.6; the GH100 files price bf16 and FP8
      // GEMMs from measured tables, whose ratios are taken against this formula.
      {"dgx-h100.yaml", model::Dtype::bf16, 794.5, 2048, 2048, 13312},
      {"dgx-h200.yaml", model::Dtype::bf16, 794.5, 2048, 2048, 13312},
      {"dgx-h100-superpod.yaml", model::Dtype::bf16, 794.5, 2048, 2048, 13312},
      {"meta-h100.yaml", model::Dtype::bf16, 794.5, 2048, 2048, 13312},
      // MI300X: AMD's own maximum achievable, not Bekman's table (ROCm/rocm-blogs, "Measuring
      // Max-Achievable FLOPs, Part 2", 2025-02: hipBLASLt db8e93b on ROCm 6.3.0, trig_float input
      // data, 1207 MHz median under load; its shape's k lies beyond the finder's range).
      // One MI250X GCD: ROCm 6.2.
      {"mi300x.yaml", model::Dtype::bf16, 708.0, 4096, 4864, 32896},
      {"mi250x.yaml", model::Dtype::bf16, 147.0, 1024, 14080, 19968},
  };
  for (const auto& p : published) {
    CAPTURE(std::string(p.platform));
    CAPTURE(p.mamf);
    const auto device = testing::catalogue_device(p.platform);
    const double best = grid_best_tflops(device, p.dtype);
    if (p.bound)
      CHECK(best < p.mamf);
    else
      CHECK(best == doctest::Approx(p.mamf).epsilon(0.005));
    CHECK(modelled_tflops(device, p.m, p.n, p.k, p.dtype) <= p.mamf * 1.005);
  }
}
