#include <twocs/cost/gemm_timing.hpp>

#include <cassert>
#include <cmath>
#include <span>

#include <twocs/units/numeric.hpp>

namespace twocs::cost {
namespace {

using units::as_double;
using units::ceil_div;

struct Path {
  units::FlopRate peak;
  double efficiency;
  std::span<const hardware::GemmTile> tiles;
  bool matrix;
};

Path path_of(const hardware::DeviceSpec& device, model::Dtype dtype) {
  const auto peak = device.peak(dtype);
  assert(peak && "validated: the device lists a peak for the dtype of every kernel");
  const auto& k = device.kernels;
  const bool matrix = k.is_matrix_dtype(dtype);
  const double efficiency = matrix ? device.roofline.gemm_efficiency_for(dtype)
                                   : k.vector_gemm_efficiency.value_or(device.roofline.gemm_efficiency);
  return {*peak, efficiency, matrix ? std::span(k.gemm_tiles) : std::span(k.vector_tiles), matrix};
}

/// The time a GEMM's kernel is bound by: its compute or its memory traffic (the roofline).
units::Seconds bound(const hardware::DeviceSpec& device, const GemmTiming& t, units::Bytes operands) {
  const units::ByteRate bandwidth = device.memory_bandwidth * device.roofline.memory_efficiency;
  return units::max(t.compute, (operands + t.reduction) / bandwidth);
}

/// One tile laid over C as tm x tn, its k loop split over `splits` blocks (NVIDIA Matrix
/// Multiplication Background guide, sections 3.1-3.2; Hockney's k_half per block).
GemmTiming tiled(const hardware::DeviceSpec& device, const Path& path, const model::GemmShape& g,
                 const hardware::GemmTile& tile, bool transposed, std::int64_t splits) {
  const std::int64_t units_count = device.kernels.compute_units;
  const std::int64_t tm = transposed ? tile.n : tile.m;
  const std::int64_t tn = transposed ? tile.m : tile.n;
  GemmTiming t;
  t.tile = tile;
  t.transposed = transposed;
  t.matrix_path = path.matrix;
  // Counted in floating point: the tiles of a large batched GEMM (b a s^2 scores) exceed 64 bits.
  t.tiles = as_double(ceil_div(g.m, tm)) * as_double(ceil_div(g.n, tn)) * as_double(g.batch);
  t.splits = splits;
  t.waves = std::ceil(t.tiles * as_double(splits) / as_double(units_count));
  t.k_steps = ceil_div(ceil_div(g.k, splits), tile.k) * tile.k;
  const units::FlopRate per_unit = path.peak * (path.efficiency * tile.efficiency / as_double(units_count));
  // One wave: every busy unit runs one block of 2 tm tn (k + k_half) FLOP-equivalents.
  const units::Flops per_block(2.0 * as_double(tm) * as_double(tn) *
                               (as_double(t.k_steps) + device.kernels.gemm_k_half));
  t.compute = per_block / per_unit * t.waves;
  // Split-K writes each block's fp32 partial C and reads them back to reduce.
  if (splits > 1)
    t.reduction = units::Bytes(2.0 * 4.0 * as_double(splits) * as_double(g.m) * as_double(g.n) * as_double(g.batch));
  return t;
}

/// No tiles: the efficiency curve alone, r(k) = r_inf k / (k + k_half) (Hockney & Jesshope 1988).
GemmTiming untiled(const hardware::DeviceSpec& device, const Path& path, const model::GemmShape& g) {
  GemmTiming t;
  t.matrix_path = path.matrix;
  t.k_steps = g.k;
  const double curve = as_double(g.k) / (as_double(g.k) + device.kernels.gemm_k_half);
  t.compute = g.flops() / (path.peak * (path.efficiency * curve));
  return t;
}

/// Separate kernels over `shape.streams` streams: full rounds of `streams` concurrent GEMMs and
/// one round of what is left, each timed as one batch (gemm_timing.hpp).
GemmTiming stream_rounds(const hardware::DeviceSpec& device, model::GemmShape shape, model::Dtype dtype) {
  const std::int64_t per_round = shape.streams;
  const std::int64_t full = shape.batch / per_round;
  const std::int64_t rest = shape.batch % per_round;
  shape.streams = 0;
  shape.batch = per_round;
  GemmTiming t = time_gemm(device, shape, dtype);
  t.compute = t.compute * as_double(full);
  t.reduction = t.reduction * as_double(full);
  t.rounds = full;
  if (rest > 0) {
    shape.batch = rest;
    const GemmTiming last = time_gemm(device, shape, dtype);
    t.compute = t.compute + last.compute;
    t.reduction = t.reduction + last.reduction;
    t.rounds += 1;
  }
  return t;
}

} // namespace

GemmTiming time_gemm(const hardware::DeviceSpec& device, const model::GemmShape& shape, model::Dtype dtype) {
  if (shape.streams > 0 && shape.batch > shape.streams && shape.m > 0 && shape.n > 0 && shape.k > 0)
    return stream_rounds(device, shape, dtype);
  const Path path = path_of(device, dtype);
  if (shape.m <= 0 || shape.n <= 0 || shape.k <= 0 || shape.batch <= 0) {
    GemmTiming none;
    none.matrix_path = path.matrix;
    return none;
  }
  if (device.kernels.compute_units <= 0 || path.tiles.empty()) return untiled(device, path, shape);
  const units::Bytes operands = shape.operand_bytes(dtype);
  GemmTiming best;
  units::Seconds best_time{};
  bool first = true;
  for (const auto& tile : path.tiles) {
    assert(tile.m > 0 && tile.n > 0 && tile.k > 0 && tile.efficiency > 0);
    // BLAS libraries ship both orientations of a rectangular tile (cuBLAS 256x128 and 128x256).
    for (bool transposed : {false, true}) {
      if (transposed && tile.m == tile.n) continue;
      const GemmTiming whole = tiled(device, path, shape, tile, transposed, 1);
      const auto idle_per_tile = static_cast<std::int64_t>(as_double(device.kernels.compute_units) / whole.tiles);
      const std::int64_t max_splits = std::max<std::int64_t>(1, std::min(idle_per_tile, ceil_div(shape.k, tile.k)));
      for (std::int64_t splits = 1; splits <= max_splits; ++splits) {
        const GemmTiming t = splits == 1 ? whole : tiled(device, path, shape, tile, transposed, splits);
        const units::Seconds time = bound(device, t, operands);
        if (first || time < best_time) best = t, best_time = time;
        first = false;
      }
    }
  }
  return best;
}

} // namespace twocs::cost
