// The roofline operator model (Williams, Waterman, Patterson, CACM 2009): a kernel takes the
// longer of its compute time at the sustained FLOP rate and its memory time at the sustained
// HBM bandwidth, plus a fixed per-kernel overhead.
#pragma once

#include <twocs/cost/operator_cost_model.hpp>
#include <twocs/hardware/device.hpp>

namespace twocs::cost {

class RooflineCostModel final : public OperatorCostModel {
public:
  explicit RooflineCostModel(hardware::DeviceSpec device);
  [[nodiscard]] units::Seconds duration(const model::ComputeOp& op) const override;
  [[nodiscard]] double clock_share(const model::ComputeOp& op) const override;

private:
  hardware::DeviceSpec device_;
};

} // namespace twocs::cost
