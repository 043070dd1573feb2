#include "text_check.hpp"

#include <fmt/format.h>

namespace twocs::config::detail {

std::optional<BadByte> find_bad_byte(std::string_view text) {
  int line = 1;
  int column = 1;
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t length = 1;
    if (c == '\n') {
      ++line;
      column = 0;
    } else if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f) {
      return BadByte{i, line, column, c};
    } else if (c >= 0x80) { // RFC 3629: a lead byte, then 1-3 continuation bytes 10xxxxxx
      length = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
      if (length == 0 || i + length > text.size()) return BadByte{i, line, column, c};
      for (std::size_t k = 1; k < length; ++k)
        if ((static_cast<unsigned char>(text[i + k]) & 0xc0) != 0x80) return BadByte{i, line, column, c};
    }
    i += length;
    ++column;
  }
  return std::nullopt;
}

std::string describe_bad_byte(const BadByte& bad) {
  return bad.byte < 0x80 ? fmt::format("the text contains the control character 0x{:02x}", bad.byte)
                         : fmt::format("the text is not UTF-8 (byte 0x{:02x})", bad.byte);
}

} // namespace twocs::config::detail
