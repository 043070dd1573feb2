#include "yaml_quantity.hpp"

#include <charconv>

#include <fmt/format.h>

#include <twocs/units/format.hpp>
#include <twocs/units/parse.hpp>

namespace twocs::config::detail {
namespace {

bool is_bare_number(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  double number = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, number);
  return !text.empty() && ec == std::errc() && ptr == end;
}

/// Parses `f` with `parse` (one of twocs::units::parse_*), turning a UnitError into an
/// InputError at the character it names.
template <class Parse>
auto read_quantity(const Field& f, std::string_view example, std::string_view kind, Parse parse) {
  const YamlNode& v = *f.value;
  if (v.kind == YamlNode::Kind::null)
    fail_at(f.where(), f.path, fmt::format("{} has no value", f.path),
            fmt::format("give a {} with its unit, e.g. '{}', or remove the key", kind, example));
  if (v.kind != YamlNode::Kind::scalar)
    fail_at(f.where(), f.path, fmt::format("{} must be a {} such as '{}', got {}", f.path, kind, example, describe(v)),
            fmt::format("write one value with its unit, e.g. '{}'", example));
  if (is_bare_number(v.scalar))
    fail_at(f.where(), f.path, fmt::format("{} needs a unit, e.g. '{}'", f.path, example),
            fmt::format("write the number with its unit, e.g. '{}': a bare number is ambiguous", example));
  try {
    return parse(v.scalar);
  } catch (const units::UnitError& e) {
    SourceLocation where = f.where(); // the scalar's first character, or its opening quote
    where.column += static_cast<int>(e.offset()) + (v.quoted ? 1 : 0);
    fail_at(where, f.path, fmt::format("{}: {}", f.path, e.what()), fmt::format("write e.g. '{}'", example));
  }
}

template <class Q> Q require_positive(const Field& f, Q value, std::string_view kind, std::string_view example) {
  if (!(value.value() > 0))
    fail_at(f.where(), f.path, fmt::format("{} must be a positive {}, got '{}'", f.path, kind, f.value->scalar),
            fmt::format("give a positive {}, e.g. '{}'", kind, example));
  return value;
}

/// The values twocs accepts, far beyond any hardware built or announced on either side. They
/// keep every simulated duration finite: a rate of 1e-300 B/s or a size of 1e300 B would turn
/// a transfer into an infinite or denormal time that the simulation cannot schedule.
template <class Q> struct Range {
  Q low;
  Q high;
};
constexpr Range<units::Bytes> size_range{units::Bytes(1.0), units::Bytes(1152921504606846976.0)}; // 1 B .. 1 EiB
constexpr Range<units::ByteRate> byte_rate_range{units::ByteRate(1e3), units::ByteRate(1e18)};    // 1 kB/s .. 1 EB/s
constexpr Range<units::FlopRate> flop_rate_range{units::FlopRate(1e6),
                                                 units::FlopRate(1e20)};                     // 1 MFLOP/s .. 100 EFLOP/s
constexpr Range<units::Seconds> duration_range{units::Seconds(0.0), units::Seconds(3600.0)}; // 0 .. 1 hour

template <class Q> Q require_in(const Field& f, Q value, const Range<Q>& range, std::string_view example) {
  if (value.value() < range.low.value() || value.value() > range.high.value())
    fail_at(f.where(), f.path,
            fmt::format("{} = '{}' is outside what twocs accepts ({} to {})", f.path, f.value->scalar,
                        units::to_string(range.low), units::to_string(range.high)),
            fmt::format("check the value and its unit prefix, e.g. '{}'", example));
  return value;
}

} // namespace

units::Bytes read_bytes(const Field& f, std::string_view example) {
  const auto value = require_positive(f, read_quantity(f, example, "size", units::parse_bytes), "size", example);
  return require_in(f, value, size_range, example);
}

units::ByteRate read_byte_rate(const Field& f, std::string_view example) {
  const auto value =
      require_positive(f, read_quantity(f, example, "bandwidth", units::parse_byte_rate), "bandwidth", example);
  return require_in(f, value, byte_rate_range, example);
}

units::FlopRate read_flop_rate(const Field& f, std::string_view example) {
  const auto value =
      require_positive(f, read_quantity(f, example, "compute rate", units::parse_flop_rate), "compute rate", example);
  return require_in(f, value, flop_rate_range, example);
}

units::Seconds read_duration(const Field& f, std::string_view example) {
  const units::Seconds value = read_quantity(f, example, "duration", units::parse_seconds);
  if (value.value() < 0)
    fail_at(f.where(), f.path, fmt::format("{} must not be negative, got '{}'", f.path, f.value->scalar),
            fmt::format("give a duration of 0 or more, e.g. '{}'", example));
  return require_in(f, value, duration_range, example);
}

} // namespace twocs::config::detail
