// The one interface through which the rest of twocs asks what a kernel costs on a device.
// Implementations: KernelCostModel (kernel_cost_model.hpp; make_cost_model.hpp picks it for a
// device) and RooflineCostModel (roofline.hpp), the plain roofline that closed-form tests use.
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
