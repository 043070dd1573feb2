#include <twocs/cost/measured_table.hpp>

#include <cassert>
#include <cmath>

#include <twocs/cost/gemm_timing.hpp>
#include <twocs/model/flash_attention.hpp>

namespace twocs::cost {
namespace {

bool is_gemm(model::OpKind kind) { return kind == model::OpKind::gemm || kind == model::OpKind::batched_gemm; }

double lg(std::int64_t v) { return std::log2(static_cast<double>(std::max<std::int64_t>(v, 1))); }

/// Where a kernel sits in size space: log2 of the GEMM dimensions, of the attention kernel's
/// axes, or of the bytes moved.
std::vector<double> log_size_of(model::OpKind kind, const std::optional<model::GemmShape>& gemm,
                                const std::optional<model::AttentionShape>& attention, units::Bytes bytes) {
  if (model::is_fused_attention(kind) && attention)
    return {lg(attention->heads), lg(attention->queries), lg(attention->keys), lg(attention->head_dim)};
  if (is_gemm(kind) && gemm) return {lg(gemm->m), lg(gemm->n), lg(gemm->k), lg(gemm->batch)};
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
  assert(!model::is_fused_attention(m.kind) && "a fused attention kernel is several steps: kernel_steps");
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

std::vector<model::ComputeOp> kernel_steps(const hardware::KernelMeasurement& m) {
  if (model::is_fused_attention(m.kind) && m.attention) return model::flash_kernel_steps(m.kind, *m.attention, m.dtype);
  return {as_compute_op(m)};
}

MeasuredTable::MeasuredTable(std::span<const hardware::KernelMeasurement> rows, const Formula& formula) {
  entries_.reserve(rows.size());
  for (const auto& row : rows) {
    units::Seconds predicted{};
    units::Bytes bytes{};
    for (const model::ComputeOp& op : kernel_steps(row)) {
      predicted += formula(op);
      bytes += op.bytes;
    }
    assert(predicted.value() > 0 && row.time.value() > 0);
    entries_.push_back({row.kind, row.dtype, log_size_of(row.kind, row.gemm, row.attention, bytes),
                        row.attention && row.attention->causal, row.accumulation, std::log(row.time / predicted),
                        row.time});
  }
}

hardware::Fp8Accumulation MeasuredTable::accumulation_for(const model::ComputeOp& op) const {
  using hardware::Fp8Accumulation;
  if (op.dtype != model::Dtype::fp8 || !is_gemm(op.kind)) return Fp8Accumulation::any;
  const Fp8Accumulation own = hardware::fp8_accumulation_of(op.pass);
  for (const auto& e : entries_)
    if (e.kind == op.kind && e.dtype == op.dtype && e.accumulation == own) return own;
  return Fp8Accumulation::any;
}

bool MeasuredTable::describes(const Entry& e, const model::ComputeOp& op, hardware::Fp8Accumulation wanted) {
  return e.kind == op.kind && e.dtype == op.dtype &&
         (wanted == hardware::Fp8Accumulation::any || e.accumulation == wanted);
}

std::optional<double> MeasuredTable::interpolated_log_ratio(const model::ComputeOp& op, const std::vector<double>& at,
                                                            hardware::Fp8Accumulation wanted) const {
  // A fused attention kernel looks among the measurements of its own mask, if there are any.
  const bool causal = op.attention && op.attention->causal;
  bool same_mask = false;
  for (const auto& e : entries_) same_mask = same_mask || (describes(e, op, wanted) && e.causal == causal);
  double weights = 0;
  double weighted_log_ratio = 0;
  int at_size = 0; // measurements of exactly this size
  double log_ratio_at_size = 0;
  for (const auto& e : entries_) {
    if (!describes(e, op, wanted) || e.log_size.size() != at.size()) continue;
    if (same_mask && e.causal != causal) continue;
    const double d2 = squared_distance(e.log_size, at);
    if (d2 < 1e-18) { // a measured size: its own ratio (the mean ratio of several rows of that size)
      ++at_size;
      log_ratio_at_size += e.log_ratio;
      continue;
    }
    // Shepard's inverse-distance weights with power 2 (weight = 1 / distance^2).
    weights += 1.0 / d2;
    weighted_log_ratio += e.log_ratio / d2;
  }
  if (at_size > 0) return log_ratio_at_size / at_size;
  if (weights == 0) return std::nullopt;
  return weighted_log_ratio / weights;
}

std::optional<units::Seconds> MeasuredTable::lookup(const model::ComputeOp& op, units::Seconds formula_time) const {
  const std::vector<double> at = log_size_of(op.kind, op.gemm, op.attention, op.bytes);
  // A one-step kernel of a measured size gets the measurement itself (the same as its ratio).
  // Several kernels of its kind measured at that size (a memory-bound kernel is placed by its
  // bytes alone: an add and a cast of the same bytes) stand together: their mean ratio, below.
  const hardware::Fp8Accumulation wanted = accumulation_for(op);
  if (!model::is_fused_attention(op.kind)) {
    const Entry* measured = nullptr;
    int at_size = 0;
    for (const auto& e : entries_)
      if (describes(e, op, wanted) && e.log_size.size() == at.size() && squared_distance(e.log_size, at) < 1e-18) {
        measured = &e;
        ++at_size;
      }
    if (at_size == 1) return measured->time;
  }
  const auto log_ratio = interpolated_log_ratio(op, at, wanted);
  if (!log_ratio) return std::nullopt;
  return formula_time * std::exp(*log_ratio);
}

} // namespace twocs::cost
