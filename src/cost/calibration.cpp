#include <twocs/cost/calibration.hpp>

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>

#include <fmt/format.h>

#include <twocs/cost/gemm_timing.hpp>
#include <twocs/cost/kernel_cost_model.hpp>
#include <twocs/error.hpp>

namespace twocs::cost {
namespace {

using hardware::DeviceSpec;
using hardware::KernelMeasurement;

// The linear parameters: 1/e, k_half/e, 1/m (dimensionless) and o (seconds).
enum Param : std::size_t { inverse_efficiency, k_half_over_efficiency, inverse_memory_efficiency, overhead, count };
using Vec = std::array<double, Param::count>;
using Mask = std::array<bool, Param::count>;

/// Which side of the roofline a kernel is on and, for a compute-bound GEMM, which tile, layout
/// and split-K it uses: the linear fit is valid while no measurement's signature changes.
struct Signature {
  enum class Side : std::uint8_t { memory, matrix_gemm, vector_gemm, arithmetic, unquantized_gemm };
  Side side = Side::memory;
  std::ptrdiff_t tile = -1;
  bool transposed = false;
  std::int64_t splits = 0;
  friend bool operator==(const Signature&, const Signature&) = default;
};

/// A measurement as a linear equation: predicted time = x . p + constant (seconds).
struct Row {
  Vec x{};
  double constant = 0;
  double time = 0;
  Signature signature;
};

Vec parameters_of(const DeviceSpec& d) {
  const double e = d.roofline.gemm_efficiency;
  return {1.0 / e, d.kernels.gemm_k_half / e, 1.0 / d.roofline.memory_efficiency, d.roofline.kernel_overhead.value()};
}

void apply_parameters(DeviceSpec& d, const Vec& p) {
  d.roofline.gemm_efficiency = 1.0 / p[inverse_efficiency];
  d.kernels.gemm_k_half = p[k_half_over_efficiency] / p[inverse_efficiency];
  d.roofline.memory_efficiency = 1.0 / p[inverse_memory_efficiency];
  d.roofline.kernel_overhead = units::Seconds(p[overhead]);
}

bool is_gemm(const KernelMeasurement& m) {
  return m.gemm && (m.kind == model::OpKind::gemm || m.kind == model::OpKind::batched_gemm);
}

/// The coefficients of a compute-bound GEMM on the matrix path: t = W (k_steps / e + k_half / e) + o
/// with W = waves 2 tm tn / per-unit peak (gemm_timing.hpp).
void gemm_coefficients(const DeviceSpec& d, const model::GemmShape& g, model::Dtype dtype, const GemmTiming& t,
                       Row& row) {
  const units::FlopRate peak = *d.peak(dtype);
  double w = 0;
  if (t.waves > 0) {
    const double per_unit = peak.value() * t.tile.efficiency / static_cast<double>(d.kernels.compute_units);
    w = static_cast<double>(t.waves) * 2.0 * static_cast<double>(t.tile.m * t.tile.n) / per_unit;
    const auto& tiles = d.kernels.gemm_tiles;
    const auto index = std::find(tiles.begin(), tiles.end(), t.tile) - tiles.begin();
    row.signature = {Signature::Side::matrix_gemm, index, t.transposed, static_cast<std::int64_t>(t.splits)};
  } else {
    w = g.flops().value() / (peak.value() * static_cast<double>(g.k));
    row.signature = {Signature::Side::unquantized_gemm};
  }
  row.x[inverse_efficiency] = w * static_cast<double>(t.k_steps);
  row.x[k_half_over_efficiency] = w;
}

Row row_of(const KernelCostModel& model, const KernelMeasurement& m) {
  const DeviceSpec& d = model.device();
  const model::ComputeOp op = as_compute_op(m);
  Row row;
  row.time = m.time.value();
  row.x[overhead] = 1;
  units::Bytes bytes = op.bytes;
  if (is_gemm(m)) {
    const GemmTiming t = time_gemm(d, *m.gemm, m.dtype);
    bytes += t.reduction;
    if (t.compute >= bytes / (d.memory_bandwidth * d.roofline.memory_efficiency)) {
      if (t.matrix_path) {
        gemm_coefficients(d, *m.gemm, m.dtype, t, row);
      } else {
        row.constant = t.compute.value(); // the vector path's efficiency is not fitted
        row.signature = {Signature::Side::vector_gemm};
      }
      return row;
    }
  } else if (op.flops.value() > 0 &&
             op.flops / model.vector_rate(m.dtype) > bytes / (d.memory_bandwidth * d.roofline.memory_efficiency)) {
    row.constant = (op.flops / model.vector_rate(m.dtype)).value(); // arithmetic-bound: only o is informed
    row.signature = {Signature::Side::arithmetic};
    return row;
  }
  row.x[inverse_memory_efficiency] = (bytes / d.memory_bandwidth).value();
  row.signature = {Signature::Side::memory};
  return row;
}

/// Solves the normal equations of the relative residuals for the free parameters (Gaussian
/// elimination with partial pivoting on column-scaled equations). A parameter whose pivot
/// vanishes is not determined by the data: it is fixed and the rest re-solved.
std::optional<Vec> solve_free(const std::vector<Row>& rows, const Vec& current, Mask& free) {
  std::array<std::array<double, count + 1>, count> n{};
  for (const Row& r : rows) {
    double rhs = r.time - r.constant;
    for (std::size_t j = 0; j < count; ++j)
      if (!free[j]) rhs -= r.x[j] * current[j];
    for (std::size_t i = 0; i < count; ++i) {
      if (!free[i]) continue;
      for (std::size_t j = 0; j < count; ++j)
        if (free[j]) n[i][j] += r.x[i] * r.x[j] / (r.time * r.time);
      n[i][count] += r.x[i] * rhs / (r.time * r.time);
    }
  }
  std::array<double, count> scale{};
  for (std::size_t i = 0; i < count; ++i) scale[i] = free[i] && n[i][i] > 0 ? std::sqrt(n[i][i]) : 1.0;
  for (std::size_t i = 0; i < count; ++i) {
    for (std::size_t j = 0; j < count; ++j) n[i][j] /= scale[i] * scale[j];
    n[i][count] /= scale[i];
  }
  std::array<std::size_t, count> order{};
  std::size_t k = 0;
  for (std::size_t i = 0; i < count; ++i)
    if (free[i]) order[k++] = i;
  for (std::size_t c = 0; c < k; ++c) {
    std::size_t pivot = c;
    for (std::size_t r = c + 1; r < k; ++r)
      if (std::fabs(n[order[r]][order[c]]) > std::fabs(n[order[pivot]][order[c]])) pivot = r;
    if (std::fabs(n[order[pivot]][order[c]]) < 1e-9) {
      free[order[c]] = false;
      return std::nullopt;
    }
    std::swap(n[order[c]], n[order[pivot]]);
    for (std::size_t r = c + 1; r < k; ++r) {
      const double f = n[order[r]][order[c]] / n[order[c]][order[c]];
      for (std::size_t j = 0; j <= count; ++j) n[order[r]][j] -= f * n[order[c]][j];
    }
  }
  Vec p = current;
  for (std::size_t c = k; c-- > 0;) {
    double s = n[order[c]][count];
    for (std::size_t j = c + 1; j < k; ++j) s -= n[order[c]][order[j]] * p[order[j]] * scale[order[j]];
    p[order[c]] = s / n[order[c]][order[c]] / scale[order[c]];
  }
  return p;
}

/// The least-squares parameters within their bounds: efficiencies in (0, 1] (1/e >= 1), k_half
/// and the overhead non-negative. A violated bound is fixed and the rest re-solved (an
/// active-set step in the manner of Lawson & Hanson's NNLS, 1974, chapter 23).
/// `free` ends with the parameters the data determined; the others were held.
Vec solve(const std::vector<Row>& rows, Vec current, Mask& free) {
  constexpr Vec lower = {1.0, 0.0, 1.0, 0.0};
  for (int round = 0; round < 4 * static_cast<int>(count); ++round) {
    const auto p = solve_free(rows, current, free);
    if (!p) continue; // a parameter was undetermined and is now fixed
    bool clamped = false;
    for (std::size_t j = 0; j < count; ++j)
      if (free[j] && (*p)[j] < lower[j]) {
        current[j] = lower[j];
        free[j] = false;
        clamped = true;
      }
    if (!clamped) return *p;
  }
  return current;
}

void require_peaks(const DeviceSpec& base, std::span<const KernelMeasurement> measurements) {
  if (measurements.empty())
    throw InputError("the profile has no measurements", {}, "add rows of op,shape,dtype,measured_time");
  for (const auto& m : measurements)
    if (!base.peak(m.dtype))
      throw InputError(fmt::format("the profile has {} kernels but device {} lists no {} peak",
                                   model::to_string(m.dtype), base.name, model::to_string(m.dtype)),
                       "device.peak_flops",
                       fmt::format("add {}: <rate> to device.peak_flops of the base platform (--platform)",
                                   model::to_string(m.dtype)));
}

} // namespace

CalibrationResult calibrate(const DeviceSpec& base, std::span<const KernelMeasurement> measurements) {
  require_peaks(base, measurements);
  CalibrationResult result;
  result.device = base;
  result.device.kernels.measured.clear();
  std::vector<Signature> last_signature;
  for (int round = 0; round < calibration_max_rounds; ++round) {
    const KernelCostModel model(result.device);
    std::vector<Row> rows;
    std::vector<Signature> signature;
    for (const auto& m : measurements) {
      // A fused attention kernel informs its own table rows only (docs/operator-models.md).
      if (model::is_fused_attention(m.kind)) continue;
      rows.push_back(row_of(model, m));
      signature.push_back(rows.back().signature);
    }
    result.iterations = round;
    if (signature == last_signature) {
      result.converged = true;
      break;
    }
    last_signature = signature;
    Mask free{};
    for (const Row& r : rows) {
      free[inverse_efficiency] = free[inverse_efficiency] || r.x[inverse_efficiency] > 0;
      free[k_half_over_efficiency] = free[k_half_over_efficiency] || r.x[k_half_over_efficiency] > 0;
      free[inverse_memory_efficiency] = free[inverse_memory_efficiency] || r.x[inverse_memory_efficiency] > 0;
    }
    free[overhead] = true;
    apply_parameters(result.device, solve(rows, parameters_of(result.device), free));
    // What the data determined in this round (a bound or a vanished pivot holds a parameter).
    result.fitted_gemm = free[inverse_efficiency];
    result.fitted_memory = free[inverse_memory_efficiency];
    result.fitted_overhead = free[overhead];
  }
  const KernelCostModel fitted(result.device);
  for (const auto& m : measurements) {
    units::Seconds predicted{};
    for (const model::ComputeOp& op : kernel_steps(m)) predicted += fitted.formula_duration(op);
    result.predicted.push_back(predicted);
  }
  return result;
}

FitErrors fit_errors(std::span<const KernelMeasurement> measurements, std::span<const units::Seconds> predicted) {
  assert(measurements.size() == predicted.size());
  constexpr model::OpKind kinds[] = {
      model::OpKind::gemm,          model::OpKind::batched_gemm,  model::OpKind::elementwise,
      model::OpKind::normalization, model::OpKind::softmax,       model::OpKind::embedding,
      model::OpKind::optimizer,     model::OpKind::flash_forward, model::OpKind::flash_backward};
  const auto add = [](ErrorStats& s, double percent) {
    s.mean_abs_percent =
        (s.mean_abs_percent * static_cast<double>(s.count) + percent) / static_cast<double>(s.count + 1);
    s.max_abs_percent = std::max(s.max_abs_percent, percent);
    ++s.count;
  };
  FitErrors errors;
  for (model::OpKind kind : kinds) {
    ErrorStats stats;
    for (std::size_t i = 0; i < measurements.size(); ++i)
      if (measurements[i].kind == kind) add(stats, 100.0 * std::fabs(predicted[i] / measurements[i].time - 1.0));
    if (stats.count > 0) errors.by_kind.emplace_back(kind, stats);
  }
  for (std::size_t i = 0; i < measurements.size(); ++i)
    add(errors.overall, 100.0 * std::fabs(predicted[i] / measurements[i].time - 1.0));
  return errors;
}

} // namespace twocs::cost
