// Private: a command-line value that must be a whole number and nothing else ("12", not "12x",
// "1e3" or ""), for the flags that take counts and ids.
#pragma once

#include <charconv>
#include <optional>
#include <string_view>
#include <system_error>

namespace twocs::cli {

/// `text` read whole as a T, or nothing when it is empty, has anything else or is out of range.
template <class T> [[nodiscard]] std::optional<T> whole_number(std::string_view text) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end) return std::nullopt;
  return value;
}

} // namespace twocs::cli
