// Measured kernel times take precedence over the formulas, exactly at measured sizes and
// interpolated between them.
#include <doctest/doctest.h>

#include <cmath>
#include <utility>

#include <twocs/cost/kernel_cost_model.hpp>
#include <twocs/cost/measured_table.hpp>
#include <twocs/hardware/attention_kernel.hpp>

using namespace twocs;

namespace {

hardware::DeviceSpec with_table(std::vector<hardware::KernelMeasurement> rows) {
  hardware::DeviceSpec d;
  d.name = "test";
  d.peak_flops[model::Dtype::bf16] = units::FlopRate(312e12);
  d.peak_flops[model::Dtype::fp8] = units::FlopRate(624e12);
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

TEST_CASE("several kernels measured at one size stand together: their geometric mean, there and between") {
  // A memory-bound kernel is placed by its bytes alone: an add and a cast of the same bytes are
  // two measurements of one size (platforms/measured/h200-memory-bf16.csv), neither the first.
  const auto elementwise = [](double bytes, double seconds) {
    hardware::KernelMeasurement r;
    r.kind = model::OpKind::elementwise;
    r.dtype = model::Dtype::bf16;
    r.bytes = units::Bytes(bytes);
    r.time = units::Seconds(seconds);
    return r;
  };
  const auto add = elementwise(75497472, 19.939e-6), cast = elementwise(75497472, 38.865e-6);
  const cost::KernelCostModel both(with_table({add, cast}));
  const double mean = std::sqrt(19.939e-6 * 38.865e-6);
  CHECK(both.duration(as_op(add)).value() == doctest::Approx(mean).epsilon(1e-12));
  CHECK(both.duration(as_op(cast)).value() == doctest::Approx(mean).epsilon(1e-12));
  // The order of the rows does not matter.
  const cost::KernelCostModel swapped(with_table({cast, add}));
  CHECK(swapped.duration(as_op(add)).value() == doctest::Approx(mean).epsilon(1e-12));
  // Elsewhere the two weigh alike: twice the size takes the formula times their mean ratio.
  const cost::KernelCostModel plain(with_table({}));
  const auto twice = elementwise(2 * 75497472.0, 0);
  const double ratio =
      std::sqrt(19.939e-6 / plain.duration(as_op(add)).value() * 38.865e-6 / plain.duration(as_op(cast)).value());
  CHECK(both.duration(as_op(twice)).value() == doctest::Approx(ratio * plain.duration(as_op(twice)).value()));
  // One row alone is returned exactly.
  CHECK(cost::KernelCostModel(with_table({add})).duration(as_op(add)).value() == 19.939e-6);
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

namespace {

hardware::KernelMeasurement flash(model::OpKind kind, std::int64_t heads, std::int64_t seq, bool causal,
                                  double seconds) {
  hardware::KernelMeasurement r;
  r.kind = kind;
  r.dtype = model::Dtype::bf16;
  r.attention = model::AttentionShape{heads, seq, seq, 128, causal};
  r.time = units::Seconds(seconds);
  return r;
}

/// The formula time of the steps the model emits for `r`, and their measured-table times.
std::pair<double, double> formula_and_table(const cost::KernelCostModel& model, const hardware::KernelMeasurement& r) {
  double formula = 0;
  double table = 0;
  for (const auto& op : cost::kernel_steps(r)) {
    formula += model.formula_duration(op).value();
    table += model.duration(op).value();
  }
  return {formula, table};
}

} // namespace

TEST_CASE("a measured attention kernel's steps add up to its measured time") {
  const auto bwd = flash(model::OpKind::flash_backward, 32, 8192, true, 5e-3);
  const cost::KernelCostModel model(with_table({bwd}));
  const auto steps = cost::kernel_steps(bwd);
  REQUIRE(steps.size() == 2); // the recomputed scores and the gradients
  CHECK(steps[0].pass == model::Pass::recompute);
  // FlashAttention's benchmark counts the backward as 2.5 forwards of 4 b s^2 h d / 2 (causal).
  const double forward = 4.0 * 32 * 8192.0 * 8192 * 128 / 2;
  CHECK((steps[0].flops + steps[1].flops).value() == doctest::Approx(2.5 * forward).epsilon(1e-12));
  CHECK(formula_and_table(model, bwd).second == doctest::Approx(5e-3).epsilon(1e-12));
  // Each step keeps its share of the formula: one ratio for the whole kernel.
  const double ratio = 5e-3 / formula_and_table(model, bwd).first;
  CHECK(model.duration(steps[1]).value() == doctest::Approx(ratio * model.formula_duration(steps[1]).value()));
}

TEST_CASE("an attention kernel takes the ratio of its own mask, or of the other when its own is absent") {
  const cost::KernelCostModel plain(with_table({}));
  const auto at_ratio = [&](std::int64_t seq, bool causal, double ratio) {
    auto r = flash(model::OpKind::flash_forward, 16384 * 16 / seq, seq, causal, 0);
    r.time = units::Seconds(ratio * formula_and_table(plain, r).first);
    return r;
  };
  const cost::KernelCostModel model(with_table({at_ratio(4096, true, 1.6), at_ratio(4096, false, 1.2)}));
  // Each mask's kernels look at that mask's rows only: with one row each, its ratio.
  const auto causal_op = cost::kernel_steps(flash(model::OpKind::flash_forward, 32, 8192, true, 0))[0];
  CHECK(model.duration(causal_op).value() / plain.duration(causal_op).value() == doctest::Approx(1.6));
  const auto full_op = cost::kernel_steps(flash(model::OpKind::flash_forward, 32, 8192, false, 0))[0];
  CHECK(model.duration(full_op).value() / plain.duration(full_op).value() == doctest::Approx(1.2));
  // Only unmasked rows: a causal kernel takes theirs, inverse-distance weighted (Shepard 1968):
  // distances^2 in log2 (heads, queries, keys, head_dim) of 1 + 1 + 1 and 9 + 9 + 9.
  const cost::KernelCostModel unmasked(with_table({at_ratio(4096, false, 1.2), at_ratio(16384, false, 1.5)}));
  const auto op = cost::kernel_steps(flash(model::OpKind::flash_forward, 128, 2048, true, 0))[0];
  const double expected = std::exp((std::log(1.2) / 3 + std::log(1.5) / 27) / (1.0 / 3 + 1.0 / 27));
  CHECK(unmasked.duration(op).value() / plain.duration(op).value() == doctest::Approx(expected).epsilon(1e-9));
  // A forward table leaves the backward kernels to the formula.
  const auto bwd = cost::kernel_steps(flash(model::OpKind::flash_backward, 32, 8192, true, 0))[1];
  CHECK(model.duration(bwd).value() == doctest::Approx(model.formula_duration(bwd).value()));
}

TEST_CASE("the chosen attention implementation's rows price the kernel, the other's are dropped") {
  auto cudnn = flash(model::OpKind::flash_forward, 32, 8192, true, 1.039e-3);
  cudnn.kernel = "cudnn";
  auto flash2 = flash(model::OpKind::flash_forward, 32, 8192, true, 1.651e-3);
  flash2.kernel = "flash2";
  const auto priced = [&](const std::string& kernel) {
    hardware::DeviceSpec device = with_table({cudnn, flash2, square(1024, 30e-6)});
    hardware::keep_attention_kernel(device, kernel);
    CHECK(device.kernels.measured.size() == 2); // the GEMM row stays
    return formula_and_table(cost::KernelCostModel(device), cudnn).second;
  };
  CHECK(priced("cudnn") == doctest::Approx(1.039e-3).epsilon(1e-12));
  CHECK(priced("flash2") == doctest::Approx(1.651e-3).epsilon(1e-12));
}

namespace {

hardware::KernelMeasurement fp8_square(std::int64_t n, double seconds, hardware::Fp8Accumulation accumulation) {
  auto r = square(n, seconds);
  r.dtype = model::Dtype::fp8;
  r.accumulation = accumulation;
  return r;
}

model::ComputeOp in_pass(model::ComputeOp op, model::Pass pass) {
  op.pass = pass;
  return op;
}

} // namespace

TEST_CASE("FP8 GEMMs take the rows of their pass's accumulation: fast forward, split backward") {
  using hardware::Fp8Accumulation;
  const auto fast = fp8_square(8192, 0.9e-3, Fp8Accumulation::fast);
  const auto split = fp8_square(8192, 1.0e-3, Fp8Accumulation::split);
  const cost::KernelCostModel both(with_table({fast, split}));
  const auto op = as_op(fast);
  CHECK(both.duration(in_pass(op, model::Pass::forward)).value() == doctest::Approx(0.9e-3).epsilon(1e-12));
  CHECK(both.duration(in_pass(op, model::Pass::recompute)).value() == doctest::Approx(0.9e-3).epsilon(1e-12));
  CHECK(both.duration(in_pass(op, model::Pass::backward)).value() == doctest::Approx(1.0e-3).epsilon(1e-12));
  // Between sizes each pass interpolates among its own rows only: at 4096 the ratios of the
  // 8192 row of its accumulation (one row each: its ratio).
  const cost::KernelCostModel plain(with_table({}));
  auto smaller = as_op(fp8_square(4096, 0, Fp8Accumulation::any));
  const double formula_8192 = plain.duration(op).value();
  const auto ratio = [&](model::Pass pass) {
    return both.duration(in_pass(smaller, pass)).value() / plain.duration(smaller).value();
  };
  CHECK(ratio(model::Pass::forward) == doctest::Approx(0.9e-3 / formula_8192).epsilon(1e-9));
  CHECK(ratio(model::Pass::backward) == doctest::Approx(1.0e-3 / formula_8192).epsilon(1e-9));
  // Rows of one accumulation (or none stated) price both passes.
  const cost::KernelCostModel split_only(with_table({split}));
  CHECK(split_only.duration(in_pass(op, model::Pass::forward)).value() == doctest::Approx(1.0e-3).epsilon(1e-12));
  const cost::KernelCostModel unstated(with_table({fp8_square(8192, 0.95e-3, Fp8Accumulation::any)}));
  CHECK(unstated.duration(in_pass(op, model::Pass::backward)).value() == doctest::Approx(0.95e-3).epsilon(1e-12));
  // BF16 GEMMs ignore FP8 rows whatever their accumulation.
  const auto bf16 = as_op(square(8192, 0));
  CHECK(both.duration(bf16).value() == doctest::Approx(plain.duration(bf16).value()));
}

TEST_CASE("on a what-if's faster device a measured kernel keeps its measured/formula ratio") {
  // Today's device: a measured GEMM and a measured softmax, 1.3x and 1.6x their formulas.
  const cost::KernelCostModel today_plain(with_table({}));
  auto gemm = square(8192, 0);
  gemm.time = units::Seconds(1.3 * today_plain.duration(as_op(gemm)).value());
  hardware::KernelMeasurement softmax;
  softmax.kind = model::OpKind::softmax;
  softmax.bytes = units::Bytes(1 << 30);
  softmax.time = units::Seconds(1.6 * today_plain.duration(as_op(softmax)).value());
  // The what-if (apply_whatif): peaks x2, bandwidth x1.5, the rows kept with the scales recorded.
  auto future = with_table({gemm, softmax});
  for (auto& [dtype, peak] : future.peak_flops) peak *= 2.0;
  future.memory_bandwidth *= 1.5;
  future.kernels.measured_compute_scale = 2;
  future.kernels.measured_memory_scale = 1.5;
  const cost::KernelCostModel model(future);
  for (const auto& [row, ratio] : {std::pair{gemm, 1.3}, std::pair{softmax, 1.6}}) {
    const auto op = as_op(row);
    // At a measured size too: the new formula times today's ratio, not today's measured time.
    CHECK(model.duration(op).value() == doctest::Approx(ratio * model.formula_duration(op).value()).epsilon(1e-9));
    CHECK(model.duration(op).value() < row.time.value());
  }
  // Without scales the measured time itself.
  CHECK(cost::KernelCostModel(with_table({gemm})).duration(as_op(gemm)).value() ==
        doctest::Approx(gemm.time.value()).epsilon(1e-12));
}

TEST_CASE("a what-if scale of 1 + 1e-6 moves a measured GEMM's chunk by about 1e-6, not by a jump") {
  // A skinny GEMM (512 x 8192 x 8192) measured at 1.3x its formula, issued in 8 row chunks (Transformer Engine's TP
  // overlap): the whole GEMM the chunks share counts the weight once per chunk, memory-bound on
  // the formula, so repricing a measured row's ratio on that formula jumped (seed 23, scenario 8518).
  const cost::KernelCostModel plain(with_table({}));
  hardware::KernelMeasurement row;
  row.kind = model::OpKind::gemm;
  row.dtype = model::Dtype::bf16;
  row.gemm = model::GemmShape{512, 8192, 8192, 1};
  row.time = units::Seconds(1.3 * plain.duration(as_op(row)).value());
  hardware::KernelMeasurement piece = row;
  piece.gemm->m = 64;
  model::ComputeOp chunk = as_op(piece);
  chunk.gemm_chunks = 8;
  auto nudged = with_table({row});
  for (auto& [dtype, peak] : nudged.peak_flops) peak *= 1 + 1e-6;
  nudged.kernels.measured_compute_scale = 1 + 1e-6;
  const double at_one = cost::KernelCostModel(with_table({row})).duration(chunk).value();
  const double at_nudge = cost::KernelCostModel(nudged).duration(chunk).value();
  CHECK(at_nudge <= at_one);
  CHECK(at_nudge == doctest::Approx(at_one).epsilon(1e-5));
}
