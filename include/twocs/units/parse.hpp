// One parser for every unit string in the input contract (docs/input-formats.md):
//   bytes   "80GiB", "25MB", "512B", "200Gb" (bits: lower-case b, divided by 8)
//   rates   "300GB/s", "25GBps", "200Gb/s", "200Gbps"
//   compute "1.5TFLOP", rates "312TFLOP/s" (also "312TFLOPS")
//   time    "5us", "1.5ms", "10ns", "2s"
// Decimal prefixes k M G T P (powers of 1000), binary Ki Mi Gi Ti Pi (powers of 1024).
// A space between number and unit is allowed; a missing unit is an error.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include <twocs/units/quantity.hpp>

namespace twocs::units {

/// A malformed quantity. `offset` is the 0-based character in the text where it went wrong,
/// so that the reader of a file can point at the exact column.
class UnitError : public std::runtime_error {
public:
  UnitError(const std::string& message, std::size_t offset) : std::runtime_error(message), offset_(offset) {}
  [[nodiscard]] std::size_t offset() const { return offset_; }

private:
  std::size_t offset_;
};

[[nodiscard]] Bytes parse_bytes(std::string_view text);
/// A size as NVIDIA nccl-tests reads -b and -e (src/common.cu, parsesize): a plain number is
/// bytes ("8"), one letter K, M, G or T in either case after it a power of 1024 ("128K", "1M",
/// "8G"); the result is truncated to whole bytes, as nccl-tests casts it to size_t. Any other
/// text is read by parse_bytes ("8MiB", "1GB"). Negative and zero values are returned: the
/// caller decides what it accepts.
[[nodiscard]] Bytes parse_nccl_bytes(std::string_view text);
[[nodiscard]] ByteRate parse_byte_rate(std::string_view text);
[[nodiscard]] Flops parse_flops(std::string_view text);
[[nodiscard]] FlopRate parse_flop_rate(std::string_view text);
[[nodiscard]] Seconds parse_seconds(std::string_view text);

/// An example of a valid string for each kind, for error messages ("e.g. 300GB/s").
inline constexpr std::string_view example_bytes = "80GiB";
inline constexpr std::string_view example_byte_rate = "300GB/s";
inline constexpr std::string_view example_flops = "1.5TFLOP";
inline constexpr std::string_view example_flop_rate = "312TFLOP/s";
inline constexpr std::string_view example_seconds = "5us";

} // namespace twocs::units
