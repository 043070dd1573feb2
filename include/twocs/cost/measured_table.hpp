// Measured kernel times that take precedence over the operator formulas (a platform's
// `device.operator_model.measured`, or a profile read by `twocs calibrate`).
//
// A kernel whose kind and dtype have measurements gets the measured time of its exact size, or
// between measured sizes an interpolation: the formula's time scaled by the measured/formula
// ratio of the measured sizes, averaged (geometrically) with inverse-distance weights in log size
// space (Shepard, "A two-dimensional interpolation function for irregularly-spaced data", ACM
// 1968, with power 2). The formula thus supplies the shape dependence (tiles, waves), the
// measurements its level; at a measured size the measurement is returned exactly, or where
// several rows measured that size (a memory-bound kernel is placed by its bytes alone), the
// formula's time scaled by the geometric mean of their measured/formula ratios (their times'
// geometric mean where they share the formula's size).
//
// An FP8 GEMM looks among the rows measured with its pass's accumulation (split in the backward
// pass, fast otherwise: hardware::fp8_accumulation_of), or among all its dtype's rows when none
// states that accumulation.
//
// A fused attention kernel (flash_forward, flash_backward) is placed by log2 of its batch x
// heads, queries, keys and head dimension, among the measurements of its own mask (causal or
// not; those of the other mask when its own has none). Its backward is two steps (the recomputed
// scores and the gradients): each gets its formula time times the kernel's measured/formula
// ratio, where the formula of a measured kernel is the sum over the steps the model emits for it,
// so the steps of a measured size add up to the measurement.
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
/// Not for the fused attention kinds, whose kernels are several steps (kernel_steps).
[[nodiscard]] model::ComputeOp as_compute_op(const hardware::KernelMeasurement& measurement);
/// The steps the model emits for the measured kernel: one, or a fused attention kernel's.
[[nodiscard]] std::vector<model::ComputeOp> kernel_steps(const hardware::KernelMeasurement& measurement);

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
    std::vector<double> log_size; // log2 of m, n, k, batch (GEMMs), of heads, queries, keys,
                                  // head_dim (fused attention) or of bytes
    bool causal = false;          // fused attention: the mask
    hardware::Fp8Accumulation accumulation = hardware::Fp8Accumulation::any;
    double log_ratio = 0; // log(measured / formula)
    units::Seconds time;
  };
  std::vector<Entry> entries_;

  /// Whether `e` measured a kernel like `op`: its kind and dtype, and the accumulation `op`'s
  /// pass runs with where the table has rows of that accumulation.
  [[nodiscard]] static bool describes(const Entry& e, const model::ComputeOp& op, hardware::Fp8Accumulation wanted);
  /// The accumulation whose rows `op` is priced from: its pass's, if the table has such rows.
  [[nodiscard]] hardware::Fp8Accumulation accumulation_for(const model::ComputeOp& op) const;
  [[nodiscard]] std::optional<double> interpolated_log_ratio(const model::ComputeOp& op, const std::vector<double>& at,
                                                             hardware::Fp8Accumulation wanted) const;
};

} // namespace twocs::cost
