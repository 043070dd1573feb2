#include <twocs/units/format.hpp>

#include <array>
#include <cmath>
#include <string_view>

#include <fmt/format.h>

namespace twocs::units {
namespace {

struct Scale {
  double factor;
  std::string_view prefix;
};

std::string scaled(double value, const std::array<Scale, 6>& scales, std::string_view unit) {
  const double magnitude = std::fabs(value);
  for (const auto& s : scales) {
    if (magnitude >= s.factor) return fmt::format("{:.3g} {}{}", value / s.factor, s.prefix, unit);
  }
  return fmt::format("{:.3g} {}", value, unit);
}

constexpr std::array<Scale, 6> decimal{{{1e18, "E"}, {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}}};
constexpr std::array<Scale, 6> binary{{{1152921504606846976.0, "Ei"},
                                       {1125899906842624.0, "Pi"},
                                       {1099511627776.0, "Ti"},
                                       {1073741824.0, "Gi"},
                                       {1048576.0, "Mi"},
                                       {1024.0, "Ki"}}};

} // namespace

std::string to_string(Seconds t) {
  const double s = t.value();
  const double magnitude = std::fabs(s);
  // Below a picosecond a time is rounding residue of sums of intervals, not a duration.
  if (magnitude < 1e-12) return "0 s";
  if (magnitude >= 1.0) return fmt::format("{:.4g} s", s);
  if (magnitude >= 1e-3) return fmt::format("{:.4g} ms", s * 1e3);
  if (magnitude >= 1e-6) return fmt::format("{:.4g} us", s * 1e6);
  return fmt::format("{:.4g} ns", s * 1e9);
}

std::string to_string(Bytes b) { return scaled(b.value(), binary, "B"); }
std::string to_string(ByteRate r) { return scaled(r.value(), decimal, "B/s"); }
std::string to_string(Flops f) { return scaled(f.value(), decimal, "FLOP"); }
std::string to_string(FlopRate r) { return scaled(r.value(), decimal, "FLOP/s"); }

} // namespace twocs::units
