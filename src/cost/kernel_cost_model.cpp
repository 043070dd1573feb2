#include <twocs/cost/kernel_cost_model.hpp>

#include <cassert>

#include <twocs/cost/gemm_timing.hpp>

namespace twocs::cost {

KernelCostModel::KernelCostModel(hardware::DeviceSpec device)
    : device_(std::move(device)),
      table_(device_.kernels.measured, [this](const model::ComputeOp& op) { return formula_duration(op); }) {}

units::FlopRate KernelCostModel::vector_rate(model::Dtype dtype) const {
  if (device_.kernels.vector_flops) return *device_.kernels.vector_flops;
  const auto peak = device_.peak(dtype);
  assert(peak && "validated: the device lists a peak for the training dtype");
  // Without a vector rate the roofline's single compute roof applies (Williams et al. 2009).
  return *peak * device_.roofline.gemm_efficiency;
}

units::Seconds KernelCostModel::formula_duration(const model::ComputeOp& op) const {
  // The fused attention kernels' formula is that of their GEMMs (docs/operator-models.md, section 2).
  const bool gemm = op.gemm && (op.kind == model::OpKind::gemm || op.kind == model::OpKind::batched_gemm ||
                                model::is_fused_attention(op.kind));
  // GEMMs: tiles, waves, split-K and the efficiency curve (gemm_timing.hpp). Memory-bound kernels:
  // their element-wise arithmetic on the vector units, bounded by the bytes they move (Ivanov et
  // al., "Data Movement Is All You Need", MLSys 2021).
  units::Seconds compute{};
  units::Bytes bytes = op.bytes;
  double launches = 1; // kernels on the critical path, each paying the launch overhead
  if (gemm) {
    const GemmTiming t = time_gemm(device_, *op.gemm, op.dtype);
    compute = t.compute;
    bytes += t.reduction;
    launches = static_cast<double>(t.rounds);
  } else if (op.flops.value() > 0) {
    compute = op.flops / vector_rate(op.dtype);
  }
  const units::Seconds memory = bytes / (device_.memory_bandwidth * device_.roofline.memory_efficiency);
  // Roofline: time = max(W / P, Q / B) (Williams et al. 2009, Eq. 1) plus a launch overhead.
  return units::max(compute, memory) + device_.roofline.kernel_overhead * launches;
}

units::Seconds KernelCostModel::duration(const model::ComputeOp& op) const {
  const units::Seconds formula = formula_duration(op);
  if (table_.empty()) return formula;
  return table_.lookup(op, formula).value_or(formula);
}

} // namespace twocs::cost
