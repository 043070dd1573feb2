#include "yaml_quantity.hpp"

#include <charconv>

#include <fmt/format.h>

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

} // namespace

units::Bytes read_bytes(const Field& f, std::string_view example) {
  return require_positive(f, read_quantity(f, example, "size", units::parse_bytes), "size", example);
}

units::ByteRate read_byte_rate(const Field& f, std::string_view example) {
  return require_positive(f, read_quantity(f, example, "bandwidth", units::parse_byte_rate), "bandwidth", example);
}

units::FlopRate read_flop_rate(const Field& f, std::string_view example) {
  return require_positive(f, read_quantity(f, example, "compute rate", units::parse_flop_rate), "compute rate",
                          example);
}

units::Seconds read_duration(const Field& f, std::string_view example) {
  const units::Seconds value = read_quantity(f, example, "duration", units::parse_seconds);
  if (value.value() < 0)
    fail_at(f.where(), f.path, fmt::format("{} must not be negative, got '{}'", f.path, f.value->scalar),
            fmt::format("give a duration of 0 or more, e.g. '{}'", example));
  return value;
}

} // namespace twocs::config::detail
