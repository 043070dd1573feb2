#include <twocs/cost/roofline.hpp>

#include <cassert>

namespace twocs::cost {

RooflineCostModel::RooflineCostModel(hardware::DeviceSpec device) : device_(std::move(device)) {}

namespace {

struct Terms {
  units::Seconds compute, memory, overhead;
};

Terms terms_of(const hardware::DeviceSpec& device, const model::ComputeOp& op) {
  const auto& p = device.roofline;
  Terms t{};
  if (op.flops.value() > 0) {
    const auto peak = device.peak(op.dtype);
    assert(peak && "validated: the device lists a peak for the training dtype");
    // Matrix work runs at the tensor-core peak; other kernels are memory-bound in practice and
    // their FLOPs are costed at the same peak so that the roofline stays one formula.
    t.compute = op.flops / (*peak * p.gemm_efficiency_for(op.dtype));
  }
  t.memory = op.bytes / (device.memory_bandwidth * p.memory_efficiency);
  t.overhead = p.kernel_overhead;
  return t;
}

} // namespace

units::Seconds RooflineCostModel::duration(const model::ComputeOp& op) const {
  const Terms t = terms_of(device_, op);
  // Roofline: time = max(W / P, Q / B) (Williams et al. 2009, Eq. 1) plus a launch overhead.
  return units::max(t.compute, t.memory) + t.overhead;
}

double RooflineCostModel::clock_share(const model::ComputeOp& op) const {
  const Terms t = terms_of(device_, op);
  const double total = (units::max(t.compute, t.memory) + t.overhead).value();
  return t.compute >= t.memory && total > 0 ? t.compute.value() / total : 0.0;
}

} // namespace twocs::cost
