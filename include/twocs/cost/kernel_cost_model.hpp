// The kernel-level operator model (docs/operator-models.md): GEMMs with tile and wave
// quantization over the device's compute units and a size-dependent efficiency curve, on the
// tensor-core or the vector path by dtype (gemm_timing.hpp); memory-bound kernels from the bytes
// they move over the sustained HBM bandwidth; a fixed launch and framework overhead per kernel;
// and measured times, where the platform carries them, ahead of all formulas (measured_table.hpp).
//
//   time = max(compute, bytes / (HBM bandwidth x memory_efficiency)) + kernel_overhead
//
// the roofline (Williams, Waterman, Patterson, CACM 2009) with a quantized compute side. With no
// compute units, tiles or k_half it is exactly RooflineCostModel for GEMMs.
#pragma once

#include <memory>

#include <twocs/cost/measured_table.hpp>
#include <twocs/cost/operator_cost_model.hpp>
#include <twocs/hardware/device.hpp>

namespace twocs::cost {

class KernelCostModel final : public OperatorCostModel {
public:
  explicit KernelCostModel(hardware::DeviceSpec device);

  /// The measured time where the table has the kernel's kind and dtype, else the formula.
  [[nodiscard]] units::Seconds duration(const model::ComputeOp& op) const override;
  [[nodiscard]] bool fp8_gemms_any_layout() const override { return device_.kernels.fp8_any_layout; }
  /// The formula alone, ignoring measurements.
  [[nodiscard]] units::Seconds formula_duration(const model::ComputeOp& op) const;
  /// The formula's compute share, for a measured kernel too (OperatorCostModel::clock_share).
  [[nodiscard]] double clock_share(const model::ComputeOp& op) const override;
  /// The arithmetic rate of memory-bound kernels in `dtype`.
  [[nodiscard]] units::FlopRate vector_rate(model::Dtype dtype) const;

  [[nodiscard]] const hardware::DeviceSpec& device() const { return device_; }

private:
  struct Terms {
    units::Seconds compute, memory, overhead;
  };
  [[nodiscard]] Terms formula_terms(const model::ComputeOp& op) const;
  /// A GEMM that leaves op.sm_margin SMs to a communication kernel beside it.
  [[nodiscard]] units::Seconds with_sm_margin(const model::ComputeOp& op) const;
  /// The device's measured rows with their ratios to the formula of the device they were timed on.
  [[nodiscard]] MeasuredTable measured_table() const;

  hardware::DeviceSpec device_;
  MeasuredTable table_;
  /// A what-if's device (whatif.compute_scale and the like): the device its measured rows were
  /// timed on, priced with those rows. This device's time of a kernel is that device's time
  /// times the ratio of the two formulas, so a what-if scale of 1 + epsilon moves every kernel by
  /// at most epsilon (null for the device as measured).
  std::shared_ptr<const KernelCostModel> measured_on_;
};

} // namespace twocs::cost
