// Calibration recovers known parameters from synthetic measurements that the model itself
// generated, and reports the errors of a fit.
#include <doctest/doctest.h>

#include <optional>

#include <twocs/cost/calibration.hpp>
#include <twocs/cost/kernel_cost_model.hpp>
#include <twocs/cost/measured_table.hpp>
#include <twocs/error.hpp>

using namespace twocs;

namespace {

hardware::DeviceSpec a100_like() {
  hardware::DeviceSpec d;
  d.name = "A100";
  d.peak_flops[model::Dtype::bf16] = units::FlopRate(312e12);
  d.peak_flops[model::Dtype::fp32] = units::FlopRate(19.5e12);
  d.memory = units::Bytes(80e9);
  d.memory_bandwidth = units::ByteRate(2039e9);
  d.kernels.compute_units = 108;
  d.kernels.gemm_tiles = {{256, 128, 32, 1.0}};
  d.kernels.matrix_dtypes = {model::Dtype::bf16};
  d.kernels.vector_flops = units::FlopRate(19.5e12);
  return d;
}

hardware::KernelMeasurement gemm_row(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch = 1) {
  hardware::KernelMeasurement r;
  r.kind = batch > 1 ? model::OpKind::batched_gemm : model::OpKind::gemm;
  r.dtype = model::Dtype::bf16;
  r.gemm = model::GemmShape{m, n, k, batch};
  return r;
}

hardware::KernelMeasurement memory_row(model::OpKind kind, double bytes) {
  hardware::KernelMeasurement r;
  r.kind = kind;
  r.dtype = model::Dtype::bf16;
  r.bytes = units::Bytes(bytes);
  r.flops = units::Flops(bytes); // one FLOP per byte: memory-bound
  return r;
}

/// A profile like scripts/profile_operators.py measures, timed by `truth`.
std::vector<hardware::KernelMeasurement> synthetic_profile(const hardware::DeviceSpec& truth) {
  std::vector<hardware::KernelMeasurement> rows;
  for (std::int64_t s : {1024, 2048, 4096, 8192}) rows.push_back(gemm_row(s, s, s));
  for (std::int64_t k : {96, 128, 768, 3072, 6144}) rows.push_back(gemm_row(8192, 3072, k));
  rows.push_back(gemm_row(2048, 2048, 128, 32));
  rows.push_back(gemm_row(2048, 128, 2048, 32));
  rows.push_back(gemm_row(16, 8192, 8192)); // memory-bound GEMM
  for (double bytes : {1e7, 1e8, 1e9}) {
    rows.push_back(memory_row(model::OpKind::normalization, bytes));
    rows.push_back(memory_row(model::OpKind::elementwise, 2 * bytes));
  }
  const cost::KernelCostModel model(truth);
  for (auto& r : rows) r.time = model.duration(cost::as_compute_op(r));
  return rows;
}

} // namespace

TEST_CASE("calibration recovers the parameters that generated the measurements") {
  auto truth = a100_like();
  truth.roofline = {0.73, 0.86, units::Seconds(6e-6), std::nullopt};
  truth.kernels.gemm_k_half = 48;
  const auto rows = synthetic_profile(truth);
  // Start from different parameters: the defaults.
  const auto result = cost::calibrate(a100_like(), rows);
  CHECK(result.fitted_gemm);
  CHECK(result.fitted_memory);
  CHECK(result.device.roofline.gemm_efficiency == doctest::Approx(0.73).epsilon(1e-6));
  CHECK(result.device.roofline.memory_efficiency == doctest::Approx(0.86).epsilon(1e-6));
  CHECK(result.device.roofline.kernel_overhead.value() == doctest::Approx(6e-6).epsilon(1e-6));
  CHECK(result.device.kernels.gemm_k_half == doctest::Approx(48).epsilon(1e-6));
  const auto errors = cost::fit_errors(rows, result.predicted);
  CHECK(errors.overall.count == rows.size());
  CHECK(errors.overall.max_abs_percent < 1e-6);
}

TEST_CASE("calibration keeps parameters within bounds and those no measurement informs") {
  auto truth = a100_like();
  truth.roofline = {0.7, 0.9, units::Seconds(3e-6), std::nullopt};
  truth.kernels.gemm_k_half = 0; // at the bound
  std::vector<hardware::KernelMeasurement> gemms;
  // Compute-bound GEMMs of different wave counts (19, 5, 10, 5): they determine e, k_half and o.
  gemms = {gemm_row(8192, 8192, 256), gemm_row(4096, 4096, 1024), gemm_row(8192, 4096, 8192),
           gemm_row(4096, 4096, 4096)};
  const cost::KernelCostModel model(truth);
  for (auto& r : gemms) r.time = model.duration(cost::as_compute_op(r));
  auto base = a100_like();
  base.roofline.memory_efficiency = 0.55;
  const auto result = cost::calibrate(base, gemms);
  CHECK(result.fitted_gemm);
  CHECK_FALSE(result.fitted_memory);
  CHECK(result.device.roofline.memory_efficiency == 0.55); // untouched
  CHECK(result.device.roofline.gemm_efficiency == doctest::Approx(0.7).epsilon(1e-6));
  CHECK(result.device.roofline.kernel_overhead.value() == doctest::Approx(3e-6).epsilon(1e-6));
  CHECK(result.device.kernels.gemm_k_half >= 0);
  CHECK(result.device.kernels.gemm_k_half == doctest::Approx(0).epsilon(1e-6));
  // Measurements faster than peak cannot push an efficiency above 1.
  for (auto& r : gemms) r.time = r.time * 0.5;
  CHECK(cost::calibrate(base, gemms).device.roofline.gemm_efficiency <= 1.0);
}

TEST_CASE("noisy measurements give a fit with small errors, reported per kind") {
  auto truth = a100_like();
  truth.roofline = {0.82, 0.78, units::Seconds(5e-6), std::nullopt};
  truth.kernels.gemm_k_half = 64;
  auto rows = synthetic_profile(truth);
  double sign = 1;
  for (auto& r : rows) r.time = r.time * (1 + 0.03 * (sign = -sign)); // +-3%
  const auto result = cost::calibrate(a100_like(), rows);
  const auto errors = cost::fit_errors(rows, result.predicted);
  CHECK(errors.overall.mean_abs_percent < 4);
  CHECK(errors.by_kind.size() == 4); // gemm, batched_gemm, elementwise, normalization
  CHECK(errors.by_kind.front().first == model::OpKind::gemm);
  CHECK(result.device.roofline.gemm_efficiency == doctest::Approx(0.82).epsilon(0.05));
}

TEST_CASE("calibration rejects an empty profile and dtypes the device has no peak for") {
  CHECK_THROWS_AS((void)cost::calibrate(a100_like(), {}), InputError);
  auto row = gemm_row(1024, 1024, 1024);
  row.dtype = model::Dtype::fp8;
  row.time = units::Seconds(1e-3);
  const std::vector rows{row};
  CHECK_THROWS_AS((void)cost::calibrate(a100_like(), rows), InputError);
}

TEST_CASE("calibration with two tiles and split-K converges and recovers the parameters") {
  auto truth = a100_like();
  // Two tiles and split-K: signatures differ by tile index and split count together, which
  // an arithmetic encoding once collapsed (tile 1 with 1 split == tile 0 with 2 splits).
  truth.kernels.gemm_tiles = {{256, 128, 32, 1.0}, {128, 128, 32, 0.9}};
  auto base = truth;
  truth.roofline = {0.76, 0.84, units::Seconds(4e-6), std::nullopt};
  truth.kernels.gemm_k_half = 40;
  const auto rows = synthetic_profile(truth);
  const auto result = cost::calibrate(base, rows);
  CHECK(result.converged);
  CHECK(result.iterations < cost::calibration_max_rounds);
  CHECK(result.fitted_overhead);
  CHECK(result.device.roofline.gemm_efficiency == doctest::Approx(0.76).epsilon(1e-6));
  CHECK(result.device.kernels.gemm_k_half == doctest::Approx(40).epsilon(1e-6));
  CHECK(cost::fit_errors(rows, result.predicted).overall.max_abs_percent < 1e-6);
}

TEST_CASE("an overhead the data cannot support is held at its bound, not reported as fitted") {
  // Memory-bound kernels faster than the bandwidth allows: the efficiency is held at 1 and the
  // overhead would have to be negative, so it is held at 0.
  const auto base = a100_like();
  std::vector<hardware::KernelMeasurement> rows{memory_row(model::OpKind::elementwise, 1e8),
                                                memory_row(model::OpKind::elementwise, 4e8)};
  for (auto& r : rows) r.time = units::Bytes(r.bytes) / base.memory_bandwidth * 0.5;
  const auto result = cost::calibrate(base, rows);
  CHECK(result.converged);
  CHECK_FALSE(result.fitted_overhead);
  CHECK(result.device.roofline.memory_efficiency == doctest::Approx(1.0));
  CHECK(result.device.roofline.kernel_overhead.value() == doctest::Approx(0.0));
}
