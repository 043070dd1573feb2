#include <twocs/hardware/speed_variation.hpp>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace twocs::hardware {
namespace {

/// SplitMix64 (Steele, Lea and Flood, OOPSLA 2014): a portable, deterministic mixer.
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// A uniform in (0, 1) from 53 random bits.
double uniform(std::uint64_t bits) { return (static_cast<double>(bits >> 11) + 0.5) / 9007199254740992.0; }

} // namespace

double speed_slowdown(const SpeedVariation& variation, std::int64_t device) {
  if (variation.spread <= 0) return 1.0;
  const std::uint64_t a = splitmix64(variation.seed * 0x100000001b3ULL + static_cast<std::uint64_t>(device) * 2);
  const std::uint64_t b = splitmix64(a ^ 0x5851f42d4c957f2dULL);
  // Box-Muller (Box and Muller 1958): a standard normal from two uniforms.
  const double z = std::sqrt(-2.0 * std::log(uniform(a))) * std::cos(2.0 * std::numbers::pi * uniform(b));
  return std::exp(variation.spread * z);
}

double expected_max_slowdown(const SpeedVariation& variation, std::int64_t devices) {
  if (variation.spread <= 0 || devices < 1) return 1.0;
  // d(Phi(z)^N) = N phi(z) Phi(z)^(N-1) dz; Phi^(N-1) in logs, so that N in the millions stays exact.
  const double n = static_cast<double>(devices);
  constexpr double from = -12.0, to = 12.0;
  constexpr int steps = 24000;
  constexpr double h = (to - from) / steps;
  double sum = 0.0;
  for (int i = 0; i <= steps; ++i) {
    const double z = from + h * i;
    const double pdf = std::exp(-0.5 * z * z) / std::sqrt(2.0 * std::numbers::pi);
    const double cdf = 0.5 * std::erfc(-z / std::numbers::sqrt2);
    const double density = n * pdf * std::exp((n - 1) * std::log(std::max(cdf, 1e-300)));
    sum += (i == 0 || i == steps ? 0.5 : 1.0) * std::exp(variation.spread * z) * density;
  }
  return sum * h;
}

} // namespace twocs::hardware
