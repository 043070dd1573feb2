// The hand-written protobuf encoder against the wire format's published examples
// (protobuf.dev/programming-guides/encoding): varints, keys, strings, doubles and nesting.
#include <twocs/report/protobuf_encoder.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <doctest/doctest.h>

using twocs::report::proto::append_varint;
using twocs::report::proto::Message;

namespace {

std::string bytes_of(std::vector<unsigned> values) {
  std::string out;
  for (const unsigned v : values) out.push_back(static_cast<char>(v));
  return out;
}

std::string varint(std::uint64_t value) {
  std::string out;
  append_varint(out, value);
  return out;
}

} // namespace

TEST_SUITE("perfetto trace") {
  TEST_CASE("protobuf varints: seven bits a byte, low group first, the high bit marking more") {
    CHECK(varint(0) == bytes_of({0x00}));
    CHECK(varint(1) == bytes_of({0x01}));
    CHECK(varint(127) == bytes_of({0x7F}));
    CHECK(varint(128) == bytes_of({0x80, 0x01}));
    CHECK(varint(300) == bytes_of({0xAC, 0x02})); // the encoding guide's example
    CHECK(varint(16383) == bytes_of({0xFF, 0x7F}));
    CHECK(varint(16384) == bytes_of({0x80, 0x80, 0x01}));
    // 2^64 - 1: nine bytes of seven ones, then the last bit.
    CHECK(varint(std::numeric_limits<std::uint64_t>::max()) ==
          bytes_of({0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}));
  }

  TEST_CASE("protobuf fields: key, then a varint, a length-prefixed string or eight little-endian bytes") {
    Message m;
    m.varint(1, 150); // the guide's Test1 { a: 150 } = 08 96 01
    CHECK(m.data() == bytes_of({0x08, 0x96, 0x01}));
    Message s;
    s.bytes(2, "testing"); // the guide's Test2 { b: "testing" }
    CHECK(s.data() == bytes_of({0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g'}));
    Message d;
    d.float64(1, 1.0); // 1.0 = 0x3FF0000000000000, wire type 1
    CHECK(d.data() == bytes_of({0x09, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F}));
    Message negative;
    negative.signed_varint(1, -1); // int64 -1: ten bytes, two's complement
    CHECK(negative.data() == bytes_of({0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}));
    Message outer;
    outer.message(3, m); // the guide's Test3 { c: { a: 150 } } = 1a 03 08 96 01
    CHECK(outer.data() == bytes_of({0x1A, 0x03, 0x08, 0x96, 0x01}));
    Message wide;
    wide.varint(60, 1); // field 60 (TracePacket.track_descriptor): key (60 << 3) = 480 = E0 03
    CHECK(wide.data() == bytes_of({0xE0, 0x03, 0x01}));
  }
}
