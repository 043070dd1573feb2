// Small integer and conversion helpers shared by every layer, defined once.
#pragma once

#include <cstdint>

namespace twocs::units {

/// A count as a double, for formulas that mix counts and quantities.
[[nodiscard]] constexpr double as_double(std::int64_t v) { return static_cast<double>(v); }

/// ceil(a / b) for a >= 0 and b > 0.
[[nodiscard]] constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

} // namespace twocs::units
