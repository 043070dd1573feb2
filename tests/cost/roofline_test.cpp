#include <doctest/doctest.h>

#include <optional>

#include <twocs/cost/roofline.hpp>

#include "support/catalogue_platform.hpp"

using namespace twocs;

namespace {

hardware::DeviceSpec device(double gemm_efficiency, double memory_efficiency, double overhead) {
  hardware::DeviceSpec d;
  d.name = "test";
  d.peak_flops[model::Dtype::bf16] = units::FlopRate(312e12);
  d.peak_flops[model::Dtype::fp32] = units::FlopRate(19.5e12);
  d.memory = units::Bytes(80e9);
  d.memory_bandwidth = units::ByteRate(2039e9);
  d.roofline = {gemm_efficiency, memory_efficiency, units::Seconds(overhead), std::nullopt};
  return d;
}

} // namespace

TEST_CASE("an FP8 GEMM takes the FP8 efficiency where the device states one, a 16-bit GEMM the other") {
  auto d = device(0.8, 0.8, 0);
  d.peak_flops[model::Dtype::fp8] = units::FlopRate(624e12);
  const auto fp8 = testing::gemm_op(8192, 8192, 8192, model::Dtype::fp8);
  const double flops = 2.0 * 8192 * 8192 * 8192;
  CHECK(cost::RooflineCostModel(d).duration(fp8).value() == doctest::Approx(flops / (624e12 * 0.8)));
  d.roofline.fp8_gemm_efficiency = 0.6;
  CHECK(cost::RooflineCostModel(d).duration(fp8).value() == doctest::Approx(flops / (624e12 * 0.6)));
  CHECK(cost::RooflineCostModel(d).duration(testing::gemm_op(8192, 8192, 8192)).value() ==
        doctest::Approx(flops / (312e12 * 0.8)));
}

TEST_CASE("a large GEMM alone takes its FLOPs over peak times efficiency") {
  const cost::RooflineCostModel model(device(0.8, 0.8, 0));
  const auto op = testing::gemm_op(8192, 8192, 8192);
  const double expected = 2.0 * 8192 * 8192 * 8192 / (312e12 * 0.8);
  CHECK(model.duration(op).value() == doctest::Approx(expected).epsilon(1e-12));
  // The per-kernel overhead adds on top.
  const cost::RooflineCostModel with_overhead(device(0.8, 0.8, 4e-6));
  CHECK(with_overhead.duration(op).value() == doctest::Approx(expected + 4e-6).epsilon(1e-12));
  // fp32 runs at its own (non-tensor-core) peak.
  CHECK(model.duration(testing::gemm_op(8192, 8192, 8192, model::Dtype::fp32)).value() ==
        doctest::Approx(2.0 * 8192 * 8192 * 8192 / (19.5e12 * 0.8)).epsilon(1e-12));
}

TEST_CASE("a memory-bound kernel takes its bytes over bandwidth times efficiency") {
  const cost::RooflineCostModel model(device(0.8, 0.9, 0));
  model::ComputeOp op;
  op.name = "layernorm";
  op.kind = model::OpKind::normalization;
  op.flops = units::Flops(8 * 1e8);
  op.bytes = units::Bytes(4e8);
  CHECK(model.duration(op).value() == doctest::Approx(4e8 / (2039e9 * 0.9)).epsilon(1e-12));
  // A skinny GEMM (matrix-vector like) is bound by its bytes, not its FLOPs.
  const auto skinny = testing::gemm_op(1, 8192, 8192);
  CHECK(model.duration(skinny).value() == doctest::Approx(skinny.bytes.value() / (2039e9 * 0.9)).epsilon(1e-12));
}
