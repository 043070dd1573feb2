#include <twocs/fileio/text_escape.hpp>

#include <cmath>
#include <iterator>

namespace twocs::fileio {

void append_json_string(fmt::memory_buffer& out, std::string_view text) {
  out.push_back('"');
  for (const char c : text) {
    switch (c) {
    case '"': out.append(std::string_view("\\\"")); break;
    case '\\': out.append(std::string_view("\\\\")); break;
    case '\b': out.append(std::string_view("\\b")); break;
    case '\f': out.append(std::string_view("\\f")); break;
    case '\n': out.append(std::string_view("\\n")); break;
    case '\r': out.append(std::string_view("\\r")); break;
    case '\t': out.append(std::string_view("\\t")); break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<unsigned>(static_cast<unsigned char>(c)));
      } else {
        out.push_back(c);
      }
    }
  }
  out.push_back('"');
}

void append_json_number(fmt::memory_buffer& out, double value) {
  if (!std::isfinite(value)) {
    out.append(std::string_view("null"));
    return;
  }
  // fmt's default double format is the shortest text that round-trips (Dragonbox), e.g. 0.1,
  // 1e+20, 12345: always valid JSON.
  fmt::format_to(std::back_inserter(out), "{}", value);
}

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&#39;"; break;
    default: out += c;
    }
  }
  return out;
}

std::string dot_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string yaml_double_quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + '"';
}

} // namespace twocs::fileio
