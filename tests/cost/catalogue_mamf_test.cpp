// The catalogue's rule for `gemm_efficiency` (docs/operator-models.md, section 6): each Blackwell
// platform file reproduces its device's published maximum achievable matmul FLOPS (Bekman,
// Machine Learning Engineering, accelerator chapter: the MAMF table) at the table's best shape,
// bf16 and FP8 apart, within the rounding of the efficiencies to two places.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include <twocs/config/scenario_loader.hpp>
#include <twocs/cost/gemm_timing.hpp>

using namespace twocs;

namespace {

/// The TFLOP/s the platform's formula gives a GEMM of m x n x k in `dtype`.
double modelled_tflops(const std::string& platform, std::int64_t m, std::int64_t n, std::int64_t k,
                       model::Dtype dtype) {
  const auto path = std::filesystem::path(TWOCS_SOURCE_DIR) / "platforms" / platform;
  const auto cluster = config::parse_platform(config::read_input(path), {});
  const model::GemmShape shape{m, n, k, 1};
  const auto timing = cost::time_gemm(cluster.device, shape, dtype);
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) / timing.compute.value() / 1e12;
}

} // namespace

TEST_CASE("the Blackwell platforms reproduce their published MAMF at its best shape, bf16 and FP8 apart") {
  // B200: 1745 TFLOP/s bf16 at 1792x16128x3072 (torch 2.7.1 + CUDA 12.8), 3432.5 FP8 at 15360x4096x3072.
  CHECK(modelled_tflops("dgx-b200.yaml", 1792, 16128, 3072, model::Dtype::bf16) == doctest::Approx(1745).epsilon(0.01));
  CHECK(modelled_tflops("dgx-b200.yaml", 15360, 4096, 3072, model::Dtype::fp8) ==
        doctest::Approx(3432.5).epsilon(0.01));
  // GB200: 1822 bf16 at 4096x9728x2048, 3615.6 FP8 at 19456x5120x1536 (torch 2.10.0.dev + CUDA 13.0).
  CHECK(modelled_tflops("gb200-nvl72.yaml", 4096, 9728, 2048, model::Dtype::bf16) ==
        doctest::Approx(1822).epsilon(0.01));
  CHECK(modelled_tflops("gb200-nvl72.yaml", 19456, 5120, 1536, model::Dtype::fp8) ==
        doctest::Approx(3615.6).epsilon(0.01));
}
