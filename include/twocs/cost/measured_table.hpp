// Measured kernel times that take precedence over the operator formulas (a platform's
// `device.operator_model.measured`, or a profile read by `twocs calibrate`).
//
// A kernel whose kind and dtype have measurements gets the measured time of its exact size, or
// between measured sizes an interpolation: the formula's time scaled by the measured/formula
// ratio of the measured sizes, averaged (geometrically) with inverse-distance weights in log size
// space (Shepard, "A two-dimensional interpolation function for irregularly-spaced data", ACM
// 1968, with power 2). The formula thus supplies the shape dependence (tiles, waves), the
// measurements its level; at a measured size the measurement is returned exactly.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <vector>

#include <twocs/hardware/kernel_params.hpp>
#include <twocs/model/operator.hpp>
#include <twocs/units/quantity.hpp>

namespace twocs::cost {

/// The kernel a measurement describes, as the model would emit it (GEMM bytes: operands once).
[[nodiscard]] model::ComputeOp as_compute_op(const hardware::KernelMeasurement& measurement);

class MeasuredTable {
public:
  using Formula = std::function<units::Seconds(const model::ComputeOp&)>;

  MeasuredTable() = default;
  /// `formula` prices a measured kernel with the operator formulas (for the ratios).
  MeasuredTable(std::span<const hardware::KernelMeasurement> rows, const Formula& formula);

  /// The measured or interpolated time of `op` whose formula time is `formula_time`; nullopt
  /// when nothing of its kind and dtype was measured.
  [[nodiscard]] std::optional<units::Seconds> lookup(const model::ComputeOp& op, units::Seconds formula_time) const;

  [[nodiscard]] bool empty() const { return entries_.empty(); }

private:
  struct Entry {
    model::OpKind kind;
    model::Dtype dtype;
    std::vector<double> log_size; // log2 of m, n, k, batch (GEMMs) or of bytes
    double log_ratio = 0;         // log(measured / formula)
    units::Seconds time;
  };
  std::vector<Entry> entries_;
};

} // namespace twocs::cost
