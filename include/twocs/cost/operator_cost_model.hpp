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
  /// The share of that time that runs at the SM clock, so that a device whose clock is lower
  /// (power and thermal management, hardware/speed_variation.hpp) takes longer: the roofline's
  /// compute side when it is the longer one, 0 for a memory-bound kernel (its time is the HBM's)
  /// and for the fixed launch overhead. 1 unless a model knows better.
  [[nodiscard]] virtual double clock_share(const model::ComputeOp& op) const {
    (void)op;
    return 1.0;
  }
  /// Whether the device's FP8 GEMMs take operands in any layout (KernelModelParams::
  /// fp8_any_layout); false, Hopper's TN-only kernels, unless a model knows better.
  [[nodiscard]] virtual bool fp8_gemms_any_layout() const { return false; }
};

} // namespace twocs::cost
