// Per-device speed variation (stragglers): same-SKU GPUs run at different speeds (Sinha et al.,
// "Not All GPUs Are Created Equal", SC'22, arXiv 2208.11035: 8% average, max 22%, performance
// variation across a cluster; outliers 1.5x slower than the median). Each device gets a fixed,
// seeded, deterministic slowdown: its kernels take m = exp(spread x z) times as long, z a standard
// normal (lognormal, median 1). In a synchronous step the slowest member of a group sets the
// pace, so the expected cost grows with the group size.
#pragma once

#include <cstdint>

namespace twocs::hardware {

struct SpeedVariation {
  double spread = 0.0;    // sigma of log(slowdown); 0 turns variation off
  std::uint64_t seed = 1; // same seed, same device slowdowns
};

/// The slowdown of `device` (>= 0) under `variation`: 1 when spread is 0.
[[nodiscard]] double speed_slowdown(const SpeedVariation& variation, std::int64_t device);

/// The expected largest slowdown of `devices` devices drawn independently:
/// E[max m_i] = integral of exp(S z) d(Phi(z)^N) (order statistics of N iid normals, David &
/// Nagaraja, "Order Statistics", 2003, eq. 2.1.1), by the trapezoid rule on a fine grid; 1 when
/// spread is 0. What a folded run gives every simulated device: a seed-free stand-in for the
/// slowest of the devices it synchronises with (docs/simulation.md, "Speed variation").
[[nodiscard]] double expected_max_slowdown(const SpeedVariation& variation, std::int64_t devices);

} // namespace twocs::hardware
