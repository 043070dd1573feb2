// Time of one GEMM on a device from its tiles, waves and efficiency curve: the compute side of
// the kernel operator model (docs/operator-models.md, "GEMMs").
//
// A BLAS library cuts C[m x n] into tiles of tm x tn, one per thread block; the device runs
// them in waves of `compute_units` blocks at a time (NVIDIA, "Matrix Multiplication Background
// User's Guide", DU-09799-001, 2023, sections 3.1 tile quantization and 3.2 wave quantization):
//   tiles = ceil(m / tm) * ceil(n / tn) * batch,   waves = ceil(tiles / compute_units)
//   time  = waves * 2 tm tn (ceil(k / tk) tk + k_half) / (peak / compute_units * efficiency)
// A tile's rate follows Hockney's (r_inf, n_1/2) curve in its k loop: r(k) = r_inf k / (k + k_half)
// (Hockney & Jesshope, "Parallel Computers 2", 1988, section 1.3.3): k_half (gemm_k_half) is the
// k at which fixed per-tile work (prologue, pipeline fill, epilogue) equals the loop's work, so
// GEMMs with a short k, like attention's k = head size, run below the large-GEMM efficiency.
// When there are fewer tiles than units, the library splits k over up to compute_units / tiles
// blocks per tile and reduces the fp32 partial results (split-K: CUTLASS "parallelized
// reductions"; Osama et al., "Stream-K", PPoPP 2023); the split that finishes first is taken.
// The tile and orientation that finish first are taken, as a BLAS heuristic would.
// A batch issued as separate kernels over S streams (GemmShape::streams) runs in rounds of S
// concurrent GEMMs that share the device's waves: ceil(batch / S) rounds, each timed as a batch
// of S (the last of what is left), one launch per round on the critical path.
#pragma once

#include <cstdint>

#include <twocs/hardware/device.hpp>
#include <twocs/model/operator.hpp>
#include <twocs/units/quantity.hpp>

namespace twocs::cost {

struct GemmTiming {
  hardware::GemmTile tile;  // the tile chosen; meaningless without tiles
  bool transposed = false;  // the tile was laid over C as tn x tm
  bool matrix_path = true;  // tensor/matrix cores (false: vector units)
  double tiles = 0;         // output tiles (a count, in floating point); 0 without tile quantization
  std::int64_t splits = 1;  // blocks sharing each tile's k loop (split-K)
  double waves = 0;         // ceil(tiles x splits / compute_units); 0 without wave quantization
  std::int64_t k_steps = 0; // k per block, padded to the tile's k step
  units::Seconds compute;   // the compute side, without memory bound and overhead
  units::Bytes reduction;   // HBM traffic of split-K partial sums (written and read in fp32)
  std::int64_t rounds = 1;  // kernel launches on the critical path: 1, or the stream rounds
};

/// The compute time of `shape` in `dtype` on `device` (which must list a peak for `dtype`).
[[nodiscard]] GemmTiming time_gemm(const hardware::DeviceSpec& device, const model::GemmShape& shape,
                                   model::Dtype dtype);

} // namespace twocs::cost
