// The protocol-buffer wire format, written by hand for the Perfetto trace (perfetto_trace.hpp):
// varints, 64-bit doubles and length-delimited fields (strings, nested messages), as the
// published encoding defines them (protobuf.dev/programming-guides/encoding).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace twocs::report::proto {

/// Appends `value` as a base-128 varint: seven bits per byte, least significant group first,
/// the high bit set on every byte but the last (300 -> AC 02).
void append_varint(std::string& out, std::uint64_t value);

/// A message being encoded: fields appended in the order written.
class Message {
public:
  /// A varint field (wire type 0): int32/int64/uint32/uint64/bool/enum. Negative int32/int64
  /// values take ten bytes, as two's complement widened to 64 bits.
  Message& varint(std::uint32_t field, std::uint64_t value);
  Message& signed_varint(std::uint32_t field, std::int64_t value) {
    return varint(field, static_cast<std::uint64_t>(value));
  }
  /// A double field (wire type 1): the IEEE-754 bits, little-endian.
  Message& float64(std::uint32_t field, double value);
  /// A string or bytes field (wire type 2).
  Message& bytes(std::uint32_t field, std::string_view value);
  /// A nested message field (wire type 2).
  Message& message(std::uint32_t field, const Message& value) { return bytes(field, value.data_); }

  [[nodiscard]] const std::string& data() const { return data_; }
  [[nodiscard]] bool empty() const { return data_.empty(); }
  void clear() { data_.clear(); }

private:
  void tag(std::uint32_t field, std::uint32_t wire_type);
  std::string data_;
};

} // namespace twocs::report::proto
