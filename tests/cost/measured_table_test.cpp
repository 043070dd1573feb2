// Measured kernel times take precedence over the formulas, exactly at measured sizes and
// interpolated between them.
#include <doctest/doctest.h>

#include <twocs/cost/kernel_cost_model.hpp>

using namespace twocs;

namespace {

hardware::DeviceSpec with_table(std::vector<hardware::KernelMeasurement> rows) {
  hardware::DeviceSpec d;
  d.name = "test";
  d.peak_flops[model::Dtype::bf16] = units::FlopRate(312e12);
  d.memory = units::Bytes(80e9);
  d.memory_bandwidth = units::ByteRate(2039e9);
  d.kernels.compute_units = 108;
  d.kernels.gemm_tiles = {{256, 128, 32, 1.0}};
  d.kernels.measured = std::move(rows);
  return d;
}

hardware::KernelMeasurement square(std::int64_t n, double seconds) {
  hardware::KernelMeasurement r;
  r.kind = model::OpKind::gemm;
  r.dtype = model::Dtype::bf16;
  r.gemm = model::GemmShape{n, n, n, 1};
  r.time = units::Seconds(seconds);
  return r;
}

model::ComputeOp as_op(const hardware::KernelMeasurement& r) { return cost::as_compute_op(r); }

} // namespace

TEST_CASE("a measured size gets its measured time, not the formula's") {
  const auto table = with_table({square(4096, 1e-3), square(8192, 6e-3)});
  const cost::KernelCostModel model(table);
  CHECK(model.duration(as_op(square(4096, 0))).value() == doctest::Approx(1e-3).epsilon(1e-12));
  CHECK(model.duration(as_op(square(8192, 0))).value() == doctest::Approx(6e-3).epsilon(1e-12));
  CHECK(model.formula_duration(as_op(square(4096, 0))).value() != doctest::Approx(1e-3));
}

TEST_CASE("between measured sizes the measured/formula ratio is interpolated") {
  const cost::KernelCostModel plain(with_table({}));
  const auto ratio_at = [&](std::int64_t n, double ratio) {
    return square(n, ratio * plain.duration(as_op(square(n, 0))).value());
  };
  const cost::KernelCostModel model(with_table({ratio_at(2048, 1.2), ratio_at(8192, 1.5)}));
  // Midway in log size (4096): the geometric mean of the two ratios (equal weights).
  const double midway = model.duration(as_op(square(4096, 0))).value() / plain.duration(as_op(square(4096, 0))).value();
  CHECK(midway == doctest::Approx(std::sqrt(1.2 * 1.5)).epsilon(1e-9));
  // Near a measured size the ratio approaches that size's.
  const double near = model.duration(as_op(square(8000, 0))).value() / plain.duration(as_op(square(8000, 0))).value();
  CHECK(near > 1.45);
  CHECK(near < 1.5);
}

TEST_CASE("a table only replaces kernels of the kinds and dtypes it measured") {
  const auto table = with_table({square(4096, 1e-3)});
  const cost::KernelCostModel model(table);
  model::ComputeOp norm;
  norm.kind = model::OpKind::normalization;
  norm.dtype = model::Dtype::bf16;
  norm.bytes = units::Bytes(1e8);
  CHECK(model.duration(norm).value() == doctest::Approx(model.formula_duration(norm).value()));
  auto batched = as_op(square(4096, 0));
  batched.kind = model::OpKind::batched_gemm;
  CHECK(model.duration(batched).value() == doctest::Approx(model.formula_duration(batched).value()));
}
