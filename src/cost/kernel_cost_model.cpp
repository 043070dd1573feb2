#include <twocs/cost/kernel_cost_model.hpp>

#include <cassert>

#include <twocs/cost/gemm_timing.hpp>

namespace twocs::cost {

KernelCostModel::KernelCostModel(hardware::DeviceSpec device) : device_(std::move(device)) {
  const auto& k = device_.kernels;
  if (k.measured.empty() || (k.measured_compute_scale == 1 && k.measured_memory_scale == 1)) {
    table_ = measured_table();
    return;
  }
  // A what-if's device: each kernel keeps its measured/formula ratio on the device the rows were
  // timed on (duration), the same ratio whether its size was measured or interpolated.
  hardware::DeviceSpec measured_on = device_;
  measured_on.kernels.measured_compute_scale = measured_on.kernels.measured_memory_scale = 1;
  hardware::scale_rates(measured_on, 1.0 / k.measured_compute_scale, 1.0 / k.measured_memory_scale);
  measured_on_ = std::make_shared<const KernelCostModel>(std::move(measured_on));
}

MeasuredTable KernelCostModel::measured_table() const {
  const auto& k = device_.kernels;
  if (k.measured.empty()) return {};
  return MeasuredTable(k.measured, [this](const model::ComputeOp& op) { return formula_duration(op); });
}

units::FlopRate KernelCostModel::vector_rate(model::Dtype dtype) const {
  if (device_.kernels.vector_flops) return *device_.kernels.vector_flops;
  const auto peak = device_.peak(dtype);
  assert(peak && "validated: the device lists a peak for the training dtype");
  // Without a vector rate the roofline's single compute roof applies (Williams et al. 2009).
  return *peak * device_.roofline.gemm_efficiency_for(dtype);
}

KernelCostModel::Terms KernelCostModel::formula_terms(const model::ComputeOp& op) const {
  // The fused attention kernels' formula is that of their GEMMs (docs/operator-models.md, section 2).
  const bool gemm = op.gemm && (op.kind == model::OpKind::gemm || op.kind == model::OpKind::batched_gemm ||
                                model::is_fused_attention(op.kind));
  // GEMMs: tiles, waves, split-K and the efficiency curve (gemm_timing.hpp). Memory-bound kernels:
  // their element-wise arithmetic on the vector units, bounded by the bytes they move (Ivanov et
  // al., "Data Movement Is All You Need", MLSys 2021).
  Terms t{};
  units::Bytes bytes = op.bytes;
  double launches = op.kernels; // kernels on the critical path, each paying the launch overhead
  if (gemm) {
    const GemmTiming g = time_gemm(device_, *op.gemm, op.dtype);
    t.compute = g.compute;
    bytes += g.reduction;
    launches = static_cast<double>(g.rounds);
  } else if (op.flops.value() > 0) {
    t.compute = op.flops / vector_rate(op.dtype);
  }
  t.memory = bytes / (device_.memory_bandwidth * device_.roofline.memory_efficiency);
  t.overhead = device_.roofline.kernel_overhead * launches;
  return t;
}

units::Seconds KernelCostModel::formula_duration(const model::ComputeOp& op) const {
  const Terms t = formula_terms(op);
  // Roofline: time = max(W / P, Q / B) (Williams et al. 2009, Eq. 1) plus a launch overhead.
  return units::max(t.compute, t.memory) + t.overhead;
}

double KernelCostModel::clock_share(const model::ComputeOp& op) const {
  if (op.gemm && op.gemm_chunks > 1) return clock_share(model::whole_gemm(op));
  // A measured kernel keeps its formula's split: compute-bound kernels stretch with the clock.
  const Terms t = formula_terms(op);
  const double total = (units::max(t.compute, t.memory) + t.overhead).value();
  return t.compute >= t.memory && total > 0 ? t.compute.value() / total : 0.0;
}

units::Seconds KernelCostModel::with_sm_margin(const model::ComputeOp& op) const {
  // Transformer Engine's set_sm_margin: cuBLASLt runs the GEMM's tiles on U - m of the device's U
  // SMs (comm_gemm_overlap.h at v1.8, `_math_sms`), so a GEMM whose chunks fill one another's
  // waves computes at (U - m) / U of its rate; its launch is unchanged. validate_fit keeps m < U.
  model::ComputeOp all_sms = op;
  all_sms.sm_margin = 0;
  const units::Seconds overhead = device_.roofline.kernel_overhead;
  const double sms = static_cast<double>(device_.kernels.compute_units);
  const double left = sms - static_cast<double>(op.sm_margin);
  assert(left > 0);
  return (duration(all_sms) - overhead) * (sms / left) + overhead;
}

units::Seconds KernelCostModel::duration(const model::ComputeOp& op) const {
  if (!op.gemm && op.kernels > 1) {
    // The main kernel as measured or modelled, and each bookkeeping kernel beside it at the
    // device's launch overhead (it moves a few bytes: Transformer Engine's one-thread kernels).
    model::ComputeOp main = op;
    main.kernels = 1;
    return duration(main) + device_.roofline.kernel_overhead * static_cast<double>(op.kernels - 1);
  }
  if (op.gemm && op.sm_margin > 0) return with_sm_margin(op);
  if (op.gemm && op.gemm_chunks > 1) {
    // A chunk issued beside the others over several streams: their tiles fill one another's last
    // wave ("computation/computation overlapping, greatly reducing quantization inefficiency",
    // torch/distributed/_symmetric_memory; Transformer Engine's _stream_compute), so a chunk costs
    // its share of the whole GEMM's time and a launch of its own.
    const units::Seconds overhead = device_.roofline.kernel_overhead;
    const units::Seconds whole = duration(model::whole_gemm(op));
    return (whole - overhead) * (1.0 / static_cast<double>(op.gemm_chunks)) + overhead;
  }
  const units::Seconds formula = formula_duration(op);
  if (measured_on_) {
    // The measured device's time (its measurement at a measured size) scaled by this device's
    // formula over that device's: exactly the measured time when the what-if scales are 1.
    const units::Seconds then = measured_on_->formula_duration(op);
    const units::Seconds measured = measured_on_->table_.lookup(op, then).value_or(then);
    return then.value() > 0 ? measured * (formula / then) : formula;
  }
  if (table_.empty()) return formula;
  return table_.lookup(op, formula).value_or(formula);
}

} // namespace twocs::cost
