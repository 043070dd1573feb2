// Fitting a device's operator-model parameters to measured kernel times (`twocs calibrate`).
//
// The fitted parameters are the large-GEMM efficiency e, the tile half-performance length k_half,
// the HBM efficiency m and the per-kernel overhead o. Given which side of the roofline each
// kernel is on and which tile its GEMM uses, every predicted time is linear in
// (1/e, k_half/e, 1/m, o):
//   compute-bound GEMM   t = W (k_pad / e + k_half / e) + o   (W = waves 2 tm tn / per-unit peak)
//   memory-bound kernel  t = (bytes / bandwidth) / m + o
// so the fit is a linear least-squares solve of the relative errors (t_pred - t) / t, repeated
// until those classifications stop changing (Lawson & Hanson, "Solving Least Squares Problems",
// 1974, chapter 23 for bound constraints: a bound violated is fixed at the bound and the rest
// re-solved). Parameters no measurement informs keep the base device's values; efficiencies are
// kept in (0, 1], k_half and o non-negative.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include <twocs/hardware/device.hpp>
#include <twocs/units/quantity.hpp>

namespace twocs::cost {

/// Rounds of classify-then-fit before calibration gives up on a stable classification.
inline constexpr int calibration_max_rounds = 50;

struct CalibrationResult {
  hardware::DeviceSpec device;           // the base device with the fitted parameters, no table
  std::vector<units::Seconds> predicted; // per measurement, by the fitted formulas
  int iterations = 0;                    // classification rounds until stable
  bool converged = false;                // false: the classification still changed after the last round
  bool fitted_gemm = false;              // the data determined e and k_half (else kept or held at a bound)
  bool fitted_memory = false;            // the data determined the HBM efficiency
  bool fitted_overhead = false;          // the data determined the per-kernel overhead
};

/// Fits `base`'s parameters to `measurements`. An InputError when there are none, or when one
/// is in a dtype the device lists no peak for.
[[nodiscard]] CalibrationResult calibrate(const hardware::DeviceSpec& base,
                                          std::span<const hardware::KernelMeasurement> measurements);

/// Mean and largest absolute relative error, in percent, of a group of kernels.
struct ErrorStats {
  std::size_t count = 0;
  double mean_abs_percent = 0;
  double max_abs_percent = 0;
};

struct FitErrors {
  std::vector<std::pair<model::OpKind, ErrorStats>> by_kind; // in OpKind order, kinds present only
  ErrorStats overall;
};

/// The errors of `predicted` against the measured times (same order and length).
[[nodiscard]] FitErrors fit_errors(std::span<const hardware::KernelMeasurement> measurements,
                                   std::span<const units::Seconds> predicted);

} // namespace twocs::cost
