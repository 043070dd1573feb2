// The GEMM formula against OpenXLA's published per-shape GEMM rates (platforms/measured/xla-*.csv:
// openxla/xla's default matmul performance table, short-burst kernel times on a B200 and an H100,
// m, n, k from 256 to 4096). Over the shapes of at least 2048 x 2048 x 1024 (kernels of 10 us and
// more), the formula's time (the cost model without measured rows) over the table's time, geometric mean
// (2026-12-05): GH100 1.048, B200 0.922 with the MAMF rule. Measured the same way on both devices, B200's formula was
// 12% faster than GH100's against its measurement (1.001 since the training-shape rule); GH100's own training-shape
// GEMMs held at the power limit run slower than its formula again (platforms/measured/gh100-*.csv), and the GH100
// platforms price them from those tables. A lead for the Blackwell rows that err fast
// (docs/validation.md, "OpenXLA's per-shape GEMM rates on B200 and H100"). Beyond XLA's grid,
// pytorch/ao's B200 cubes (torchao-b200-gemm-bf16.csv) put the MAMF-rule formula 12-17% fast at 6144-8192.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <twocs/config/profile_csv.hpp>
#include <twocs/config/scenario_loader.hpp>
#include <twocs/cost/kernel_cost_model.hpp>

#include "support/catalogue_platform.hpp"

using namespace twocs;

namespace {

/// The platform's operator model with its measured rows set aside.
cost::KernelCostModel formula_of(const std::string& platform) {
  return testing::formula_model(testing::catalogue_device(platform));
}

/// The rows of platforms/measured/<table>.
std::vector<hardware::KernelMeasurement> measured_rows(const std::string& table) {
  const auto csv = std::filesystem::path(TWOCS_SOURCE_DIR) / "platforms" / "measured" / table;
  return config::parse_profile_csv(config::read_input(csv));
}

/// Geometric mean of the formula's time over the table's time, for the table's GEMMs of at least
/// 2048 x 2048 x 1024, with the count of such rows.
std::pair<double, int> formula_over_table(const std::string& platform, const std::string& table) {
  const auto formula = formula_of(platform);
  double log_sum = 0;
  int rows = 0;
  for (const auto& row : measured_rows(table)) {
    REQUIRE(row.gemm.has_value());
    const auto& s = *row.gemm;
    if (s.m * s.n * s.k < std::int64_t{2048} * 2048 * 1024) continue;
    log_sum += std::log(formula.duration(testing::gemm_op(s.m, s.n, s.k, row.dtype)) / row.time);
    ++rows;
  }
  return {std::exp(log_sum / rows), rows};
}

} // namespace

TEST_CASE("against OpenXLA's burst-clock GEMM rates at 2048-4096 the B200 and GH100 formulas stand within 6% of each "
          "other") {
  const auto [b200, b200_rows] = formula_over_table("dgx-b200.yaml", "xla-b200-gemm-bf16.csv");
  const auto [gh100, gh100_rows] = formula_over_table("dgx-h100.yaml", "xla-gh100-gemm-bf16.csv");
  CHECK(b200_rows == 35);
  CHECK(gh100_rows == 35);
  MESSAGE("formula over table, geometric mean: B200 ", b200, ", GH100 ", gh100);
  // With the MAMF rule's 0.778 B200 gave 0.922, 12% faster than GH100 against one method: the
  // lead that the training-shape rule (blackwell_training_gemm_test.cpp) followed to 0.688.
  CHECK(b200 == doctest::Approx(1.001).epsilon(0.01));
  CHECK(gh100 == doctest::Approx(1.048).epsilon(0.01));
  CHECK(std::fabs(b200 / gh100 - 1.0) < 0.06);
}

TEST_CASE("on GH100 FP8 GEMMs fall further below their formula than bf16 ones at training shapes") {
  // platforms/measured/gh100-gemm-*.csv, the training shapes (not the log2 grid) of at least
  // 4096 x 4096 x 2048: measured over formula, geometric mean, per dtype and accumulation.
  const auto formula = formula_of("dgx-h100.yaml");
  std::map<std::string, std::pair<double, int>> sums;
  for (const char* table : {"gh100-gemm-bf16.csv", "gh100-gemm-fp8.csv"}) {
    for (const auto& row : measured_rows(table)) {
      REQUIRE(row.gemm.has_value());
      const auto& s = *row.gemm;
      if (row.name.starts_with("grid.") || s.m * s.n * s.k < std::int64_t{4096} * 4096 * 2048) continue;
      const std::string key = row.dtype == model::Dtype::bf16                       ? "bf16"
                              : row.accumulation == hardware::Fp8Accumulation::fast ? "fast"
                                                                                    : "split";
      auto& [log_sum, n] = sums[key];
      log_sum += std::log(row.time / formula.duration(testing::gemm_op(s.m, s.n, s.k, row.dtype)));
      ++n;
    }
  }
  const auto mean = [&](const std::string& key) { return std::exp(sums[key].first / sums[key].second); };
  MESSAGE("measured over formula: bf16 ", mean("bf16"), ", fp8 fast ", mean("fast"), ", fp8 split ", mean("split"));
  CHECK(mean("bf16") == doctest::Approx(1.10).epsilon(0.01));
  CHECK(mean("fast") == doctest::Approx(1.15).epsilon(0.01));
  CHECK(mean("split") == doctest::Approx(1.24).epsilon(0.01));
  CHECK(mean("bf16") < mean("fast"));
  CHECK(mean("fast") < mean("split"));
}

TEST_CASE("beyond XLA's grid, torchao's B200 bf16 cubes: the formula within 5% at 6144 and 8192, 13% slow at 4096") {
  // pytorch/ao #2427's bf16 reference lines (platforms/measured/torchao-b200-gemm-bf16.csv): the
  // formula's time over the measured one, computed here from the printed kernel times.
  const auto formula = formula_of("dgx-b200.yaml");
  const auto ratio = [&](std::int64_t s, double measured_us) {
    return formula.duration(testing::gemm_op(s, s, s)).value() / (measured_us * 1e-6);
  };
  const double at_4096 = ratio(4096, 97.4);
  const double at_6144 = ratio(6144, 319);
  const double at_8192 = ratio(8192, 774);
  MESSAGE("B200 formula over torchao: 4096^3 ", at_4096, ", 6144^3 ", at_6144, ", 8192^3 ", at_8192);
  // The MAMF rule's 0.778 gave 0.988, 0.875 and 0.833: 12-17% fast at training sizes.
  CHECK(at_4096 == doctest::Approx(1.127).epsilon(0.01));
  CHECK(at_6144 == doctest::Approx(1.002).epsilon(0.01));
  CHECK(at_8192 == doctest::Approx(0.955).epsilon(0.01));
  // The formula's rate keeps rising with size; the measured one is flat at 1.41-1.45 PFLOP/s.
  CHECK(2.0 * 8192 * 8192 * 8192 / 774e-6 < 1.03 * 2.0 * 4096 * 4096 * 4096 / 97.4e-6);
  // The CSV holds these times, and at 4096^3 agrees with OpenXLA's table within 0.5%.
  const auto rows = measured_rows("torchao-b200-gemm-bf16.csv");
  REQUIRE(rows.size() == 7);
  CHECK(rows.back().gemm->m == 8192);
  CHECK(rows.back().time.value() == doctest::Approx(774e-6));
  CHECK(rows[4].time.value() / 97.002e-6 == doctest::Approx(1.0).epsilon(0.005));
}
