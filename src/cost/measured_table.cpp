#include <twocs/cost/measured_table.hpp>

#include <cassert>
#include <cmath>

#include <twocs/cost/gemm_timing.hpp>

namespace twocs::cost {
namespace {

bool is_gemm(model::OpKind kind) { return kind == model::OpKind::gemm || kind == model::OpKind::batched_gemm; }

/// Where a kernel sits in size space: log2 of the GEMM dimensions, or of the bytes moved.
std::vector<double> log_size_of(model::OpKind kind, const std::optional<model::GemmShape>& gemm, units::Bytes bytes) {
  if (is_gemm(kind) && gemm) {
    const auto lg = [](std::int64_t v) { return std::log2(static_cast<double>(std::max<std::int64_t>(v, 1))); };
    return {lg(gemm->m), lg(gemm->n), lg(gemm->k), lg(gemm->batch)};
  }
  return {std::log2(std::max(bytes.value(), 1.0))};
}

double squared_distance(const std::vector<double>& a, const std::vector<double>& b) {
  assert(a.size() == b.size());
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d += (a[i] - b[i]) * (a[i] - b[i]);
  return d;
}

} // namespace

model::ComputeOp as_compute_op(const hardware::KernelMeasurement& m) {
  model::ComputeOp op;
  op.name = std::string(model::to_string(m.kind));
  op.kind = m.kind;
  op.dtype = m.dtype;
  op.gemm = m.gemm;
  if (is_gemm(m.kind) && m.gemm) {
    op.flops = m.gemm->flops();
    op.bytes = m.gemm->operand_bytes(m.dtype);
  } else {
    op.flops = m.flops;
    op.bytes = m.bytes;
  }
  return op;
}

MeasuredTable::MeasuredTable(std::span<const hardware::KernelMeasurement> rows, const Formula& formula) {
  entries_.reserve(rows.size());
  for (const auto& row : rows) {
    const model::ComputeOp op = as_compute_op(row);
    const units::Seconds predicted = formula(op);
    assert(predicted.value() > 0 && row.time.value() > 0);
    entries_.push_back(
        {row.kind, row.dtype, log_size_of(row.kind, row.gemm, op.bytes), std::log(row.time / predicted), row.time});
  }
}

std::optional<units::Seconds> MeasuredTable::lookup(const model::ComputeOp& op, units::Seconds formula_time) const {
  const std::vector<double> at = log_size_of(op.kind, op.gemm, op.bytes);
  double weights = 0;
  double weighted_log_ratio = 0;
  for (const auto& e : entries_) {
    if (e.kind != op.kind || e.dtype != op.dtype || e.log_size.size() != at.size()) continue;
    const double d2 = squared_distance(e.log_size, at);
    if (d2 < 1e-18) return e.time; // a measured size: the measurement itself
    // Shepard's inverse-distance weights with power 2 (weight = 1 / distance^2).
    weights += 1.0 / d2;
    weighted_log_ratio += e.log_ratio / d2;
  }
  if (weights == 0) return std::nullopt;
  return formula_time * std::exp(weighted_log_ratio / weights);
}

} // namespace twocs::cost
