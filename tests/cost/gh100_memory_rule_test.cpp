// The GH100 rule for memory-bound kernels (scripts/derive_gh100_memory.py; docs/operator-models.md,
// "Memory-bound kernels of the GH100 parts"): the H100 SXM platforms price norms, softmax,
// element-wise kernels and Adam from the kernels measured on an H200 (the same GH100 chip), each
// keeping its H200 time unless the H100's HBM caps it at the best fraction of peak any of them
// reached on the H200. The derived table is recomputed here from the H200's, independently of the
// script, so that it cannot drift from its rule or from the platforms' bandwidth.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <twocs/config/profile_csv.hpp>
#include <twocs/cost/kernel_cost_model.hpp>
#include <twocs/cost/measured_table.hpp>

#include "support/catalogue_platform.hpp"

using namespace twocs;

namespace {

std::vector<hardware::KernelMeasurement> measured_rows(const std::string& file) {
  const auto path = std::filesystem::path(TWOCS_SOURCE_DIR) / "platforms" / "measured" / file;
  return config::parse_profile_csv(config::read_input(path));
}

constexpr double h200_bandwidth = 4.8e12;  // NVIDIA H200 datasheet, 4.8 TB/s
constexpr double h100_bandwidth = 3.35e12; // NVIDIA H100 SXM5 datasheet, 3.35 TB/s

double fraction_of_h200_peak(const hardware::KernelMeasurement& row) {
  return row.bytes.value() / row.time.value() / h200_bandwidth;
}

const char* const h100_platforms[] = {"dgx-h100.yaml", "dgx-h100-superpod.yaml", "meta-h100.yaml"};

} // namespace

TEST_CASE("the H100's memory-bound kernels are the H200's, capped by the H100's HBM at the best measured fraction") {
  const auto h200 = measured_rows("h200-memory-bf16.csv");
  const auto h100 = measured_rows("h100-memory-bf16.csv");
  REQUIRE(h200.size() == h100.size());
  REQUIRE(h200.size() == 19);
  double best = 0;
  for (const auto& row : h200) best = std::max(best, fraction_of_h200_peak(row));
  // The residual add at 32768 tokens: 1,207,959,552 bytes in 277.259 us.
  CHECK(best == doctest::Approx(1207959552.0 / 277.259e-6 / 4.8e12));
  CHECK(best == doctest::Approx(0.9077).epsilon(1e-4));
  int capped = 0;
  for (std::size_t i = 0; i < h200.size(); ++i) {
    CAPTURE(h200[i].name);
    CHECK(h100[i].name == h200[i].name);
    CHECK(h100[i].kind == h200[i].kind);
    CHECK(h100[i].bytes.value() == h200[i].bytes.value());
    CHECK(h100[i].flops.value() == h200[i].flops.value());
    const double cap = h200[i].bytes.value() / (best * h100_bandwidth);
    const double expected = std::max(h200[i].time.value(), cap);
    CHECK(h100[i].time.value() == doctest::Approx(expected).epsilon(1e-5)); // written to 1 ns
    CHECK(h100[i].time.value() >= h200[i].time.value());
    if (cap > h200[i].time.value()) ++capped;
  }
  // The kernels that ran above 0.698 of the H200's peak (3.35 / 4.8) are capped: the adds, the
  // large GELU and dropout, Adam; the norms, softmax and casts keep their H200 times.
  CHECK(capped == 7);
}

TEST_CASE("every H100 SXM platform reads the derived table at the bandwidth it was derived for") {
  const auto h100 = measured_rows("h100-memory-bf16.csv");
  for (const std::string platform : h100_platforms) {
    CAPTURE(platform);
    const hardware::DeviceSpec device = testing::catalogue_device(platform);
    CHECK(device.memory_bandwidth.value() == doctest::Approx(h100_bandwidth));
    const cost::KernelCostModel model(device);
    // At a measured size a kernel takes the table's time exactly (measured_table.hpp); the casts
    // have the adds' kinds and sizes, so a kernel of that size takes the two's geometric mean.
    for (const auto& row : h100) {
      double log_time = 0;
      int same_size = 0;
      for (const auto& r : h100)
        if (r.kind == row.kind && r.bytes.value() == row.bytes.value()) {
          log_time += std::log(r.time.value());
          ++same_size;
        }
      CAPTURE(row.name);
      CHECK(model.duration(cost::as_compute_op(row)).value() ==
            doctest::Approx(std::exp(log_time / same_size)).epsilon(1e-9));
    }
  }
  // The H200 keeps its own measurements: the same residual add (with the cast of its size),
  // uncapped there.
  const cost::KernelCostModel h200(testing::catalogue_device("dgx-h200.yaml"));
  for (const auto& row : measured_rows("h200-memory-bf16.csv"))
    if (row.name == "residual.add.s8192")
      CHECK(h200.duration(cost::as_compute_op(row)).value() == doctest::Approx(std::sqrt(71.585e-6 * 143.326e-6)));
}
