// Escaping text for the formats the report layer writes by hand (JSON strings, HTML, Graphviz DOT)
// and writing numbers the same way every time. Shared by every writer of files.
#pragma once

#include <string>
#include <string_view>

#include <fmt/format.h>

namespace twocs::fileio {

/// Appends `text` as a JSON string literal, quotes included. Control characters become \uXXXX
/// (or \n, \t, ...); bytes from 0x80 up pass through unchanged (UTF-8 stays UTF-8).
void append_json_string(fmt::memory_buffer& out, std::string_view text);

/// Appends a JSON number with the shortest text that reads back as the same double, or
/// `null` when the value is not finite (JSON has no NaN or infinity).
void append_json_number(fmt::memory_buffer& out, double value);

/// `text` with & < > " ' replaced by character references: safe in HTML text and attributes.
[[nodiscard]] std::string html_escape(std::string_view text);

/// `text` as a YAML double-quoted scalar, quotes included (YAML 1.2, section 7.3.1: a backslash
/// before " and \, a line break as \n).
[[nodiscard]] std::string yaml_double_quoted(std::string_view text);

/// `text` escaped for a double-quoted Graphviz string: \ and " get a backslash, a line break
/// becomes \n; other control characters become spaces.
[[nodiscard]] std::string dot_escape(std::string_view text);

} // namespace twocs::fileio
