#include <twocs/report/protobuf_encoder.hpp>

#include <bit>

namespace twocs::report::proto {
namespace {

// Wire types (protobuf.dev/programming-guides/encoding, "Message Structure").
constexpr std::uint32_t wire_varint = 0;
constexpr std::uint32_t wire_i64 = 1;
constexpr std::uint32_t wire_len = 2;

} // namespace

void append_varint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void Message::tag(std::uint32_t field, std::uint32_t wire_type) {
  // A field's key is (field_number << 3) | wire_type, itself a varint.
  append_varint(data_, (std::uint64_t{field} << 3) | wire_type);
}

Message& Message::varint(std::uint32_t field, std::uint64_t value) {
  tag(field, wire_varint);
  append_varint(data_, value);
  return *this;
}

Message& Message::float64(std::uint32_t field, double value) {
  tag(field, wire_i64);
  auto bits = std::bit_cast<std::uint64_t>(value);
  for (int i = 0; i < 8; ++i, bits >>= 8) data_.push_back(static_cast<char>(bits & 0xFF)); // little-endian
  return *this;
}

Message& Message::bytes(std::uint32_t field, std::string_view value) {
  tag(field, wire_len);
  append_varint(data_, value.size());
  data_.append(value);
  return *this;
}

} // namespace twocs::report::proto
