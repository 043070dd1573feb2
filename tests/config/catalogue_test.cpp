// The platform catalogue: the nine devices the project promises, each carrying the kernel
// operator model's parameters, which size changes with --set keep.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include <twocs/config/scenario_loader.hpp>

using namespace twocs;

namespace {

hardware::ClusterSpec load(const std::string& name, const std::vector<std::string>& sets = {}) {
  return config::parse_platform(config::read_input(std::filesystem::path(TWOCS_SOURCE_DIR) / "platforms" / name), sets);
}

} // namespace

TEST_CASE("the catalogue has the nine devices, each with its operator-model parameters") {
  const char* files[] = {"dgx-a100-40gb.yaml", "dgx-a100-80gb.yaml", "dgx-h100.yaml", "dgx-h200.yaml", "dgx-b200.yaml",
                         "mi100.yaml",         "mi210.yaml",         "mi250x.yaml",   "mi300x.yaml"};
  for (const char* file : files) {
    CAPTURE(file);
    const auto c = load(file);
    const auto& k = c.device.kernels;
    CHECK(k.compute_units > 0);
    CHECK_FALSE(k.gemm_tiles.empty());
    CHECK(k.gemm_k_half > 0);
    CHECK_FALSE(k.matrix_dtypes.empty());
    CHECK(k.vector_flops.has_value());
    CHECK(c.device.roofline.gemm_efficiency < 1.0);
    CHECK(c.device.roofline.memory_efficiency < 1.0);
    CHECK(c.device.roofline.kernel_overhead.value() > 0);
  }
}

TEST_CASE("changing sizes with --set keeps a catalogue platform's operator model") {
  const auto base = load("dgx-h100.yaml");
  const auto grown = load("dgx-h100.yaml", {"cluster.nodes=4", "cluster.network.bandwidth=800Gb/s"});
  CHECK(grown.nodes == 4);
  CHECK(grown.device.kernels.compute_units == base.device.kernels.compute_units);
  CHECK(grown.device.kernels.gemm_tiles == base.device.kernels.gemm_tiles);
  CHECK(grown.device.roofline.gemm_efficiency == base.device.roofline.gemm_efficiency);
  CHECK(grown.node.interconnect.efficiency == base.node.interconnect.efficiency);
}

TEST_CASE("every catalogue platform carries the published variation and interference, --set overrides") {
  // Sinha et al. SC'22: 8% across the non-outlier GPUs, 5.4 sigma of a normal (1.5 IQR whiskers).
  const double sigma = 0.08 / (2 * (0.6745 + 1.5 * 2 * 0.6745));
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(TWOCS_SOURCE_DIR) / "platforms")) {
    if (entry.path().extension() != ".yaml") continue; // platforms/measured/ holds profiles
    const std::string file = entry.path().filename().string();
    CAPTURE(file);
    const auto c = load(file);
    CHECK(c.device.speed_variation.spread == doctest::Approx(sigma).epsilon(0.02));
    CHECK(c.device.comm_interference.compute_slowdown == doctest::Approx(0.19)); // Lee et al. 2025
  }
  const auto varied =
      load("dgx-a100-80gb.yaml", {"device.speed_variation.spread=0.03", "device.speed_variation.seed=5"});
  CHECK(varied.device.speed_variation.spread == doctest::Approx(0.03));
  CHECK(varied.device.speed_variation.seed == 5);
  CHECK(load("dgx-a100-80gb.yaml", {"device.speed_variation.spread=0"}).device.speed_variation.spread == 0);
  CHECK(hardware::DeviceSpec{}.speed_variation.spread == 0); // a platform without the key: every device alike
}
