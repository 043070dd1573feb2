// Golden-file comparison for the suites. Goldens live in tests/golden/; running the tests with
// TWOCS_UPDATE_GOLDEN=1 in the environment rewrites them (tests/golden/README.md).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include <doctest/doctest.h>

namespace twocs::testing {

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline bool updating_goldens() {
  const char* flag = std::getenv("TWOCS_UPDATE_GOLDEN");
  return flag != nullptr && std::string_view(flag) == "1";
}

/// The 1-based number of the first line where `a` and `b` differ, and that line of each.
inline std::string first_difference(const std::string& expected, const std::string& actual) {
  std::istringstream e(expected);
  std::istringstream a(actual);
  std::string le;
  std::string la;
  for (int line = 1;; ++line) {
    const bool more_e = static_cast<bool>(std::getline(e, le));
    const bool more_a = static_cast<bool>(std::getline(a, la));
    if (!more_e && !more_a) return "the texts differ only in their final line break";
    if (!more_e || !more_a || le != la)
      return "line " + std::to_string(line) + "\n  golden: " + (more_e ? le : "<end>") +
             "\n  actual: " + (more_a ? la : "<end>");
  }
}

/// Checks `actual` against tests/golden/`name` byte for byte.
inline void check_golden(const std::string& name, const std::string& actual) {
  const auto path = std::filesystem::path(TWOCS_GOLDEN_DIR) / name;
  if (updating_goldens()) {
    std::ofstream(path, std::ios::binary) << actual;
    MESSAGE("rewrote golden file " << path.string());
    return;
  }
  REQUIRE_MESSAGE(std::filesystem::exists(path),
                  "missing golden file " << path.string() << ": run the tests with TWOCS_UPDATE_GOLDEN=1");
  const std::string expected = read_text(path);
  CHECK_MESSAGE(expected == actual, "output differs from golden file " << path.string() << " at "
                                                                       << first_difference(expected, actual)
                                                                       << "\n(if intended: TWOCS_UPDATE_GOLDEN=1)");
}

} // namespace twocs::testing
