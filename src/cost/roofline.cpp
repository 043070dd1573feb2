#include <twocs/cost/roofline.hpp>

#include <cassert>

namespace twocs::cost {

RooflineCostModel::RooflineCostModel(hardware::DeviceSpec device) : device_(std::move(device)) {}

units::Seconds RooflineCostModel::duration(const model::ComputeOp& op) const {
  const auto& p = device_.roofline;
  units::Seconds compute_time{};
  if (op.flops.value() > 0) {
    const auto peak = device_.peak(op.dtype);
    assert(peak && "validated: the device lists a peak for the training dtype");
    // Matrix work runs at the tensor-core peak; other kernels are memory-bound in practice and
    // their FLOPs are costed at the same peak so that the roofline stays one formula.
    compute_time = op.flops / (*peak * p.gemm_efficiency);
  }
  const units::Seconds memory_time = op.bytes / (device_.memory_bandwidth * p.memory_efficiency);
  // Roofline: time = max(W / P, Q / B) (Williams et al. 2009, Eq. 1) plus a launch overhead.
  return units::max(compute_time, memory_time) + p.kernel_overhead;
}

} // namespace twocs::cost
