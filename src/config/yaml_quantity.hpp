// Reading quantities with units ("300GB/s", "80GiB", "312TFLOP/s", "5us") from a located YAML
// value. A bare number is an error that names the key and shows the unit; a malformed unit
// points at the character where it went wrong.
#pragma once

#include <string_view>

#include <twocs/units/quantity.hpp>

#include "yaml_reader.hpp"

namespace twocs::config::detail {

/// `example` is a valid value for this key ("300GB/s"). Sizes and rates must be positive,
/// durations not negative.
[[nodiscard]] units::Bytes read_bytes(const Field& f, std::string_view example);
[[nodiscard]] units::ByteRate read_byte_rate(const Field& f, std::string_view example);
[[nodiscard]] units::FlopRate read_flop_rate(const Field& f, std::string_view example);
[[nodiscard]] units::Seconds read_duration(const Field& f, std::string_view example);

} // namespace twocs::config::detail
