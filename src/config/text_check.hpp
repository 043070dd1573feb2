// Whether an input is text at all: binary files and other encodings are refused before a
// parser sees them, with the line and column of the first offending byte.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace twocs::config::detail {

struct BadByte {
  std::size_t offset; // from the start of the text
  int line;           // 1-based
  int column;         // 1-based, in characters
  unsigned char byte;
};

/// The first byte that cannot be in a text input, if any: a byte that is not UTF-8 (RFC 3629),
/// or a control character other than tab, line feed and carriage return (YAML 1.2, section
/// 5.1, c-printable; CSV files are held to the same).
[[nodiscard]] std::optional<BadByte> find_bad_byte(std::string_view text);

/// "the text is not UTF-8 (byte 0xff)" or "the text contains the control character 0x00".
[[nodiscard]] std::string describe_bad_byte(const BadByte& bad);

} // namespace twocs::config::detail
