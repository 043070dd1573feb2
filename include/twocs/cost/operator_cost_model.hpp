// The one interface through which the rest of twocs asks what a kernel costs on a device.
// Implementations: RooflineCostModel (roofline.hpp). Calibrated tables plug in here too.
#pragma once

#include <memory>

#include <twocs/model/operator.hpp>
#include <twocs/units/quantity.hpp>

namespace twocs::cost {

class OperatorCostModel {
public:
  virtual ~OperatorCostModel() = default;
  /// Time one device spends running `op` alone.
  [[nodiscard]] virtual units::Seconds duration(const model::ComputeOp& op) const = 0;
};

} // namespace twocs::cost
