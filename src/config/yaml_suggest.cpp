#include "yaml_suggest.hpp"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <vector>

#include <fmt/format.h>

namespace twocs::config::detail {
namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitution = diagonal + (lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitution});
    }
  }
  return row[b.size()];
}

} // namespace

std::optional<std::string_view> closest_name(std::string_view given, std::span<const std::string_view> known) {
  // Up to a third of the letters may be wrong (at least two), so "hiden" finds "hidden" but
  // "x" does not find "tensor".
  const std::size_t tolerance = std::max<std::size_t>(2, given.size() / 3);
  std::optional<std::string_view> best;
  std::size_t best_distance = tolerance + 1;
  for (std::string_view name : known) {
    const std::size_t distance = edit_distance(given, name);
    if (distance < best_distance && distance < std::max(given.size(), name.size())) {
      best = name;
      best_distance = distance;
    }
  }
  return best;
}

std::string join_names(std::span<const std::string_view> names) { return fmt::format("{}", fmt::join(names, ", ")); }

std::string suggest(std::string_view given, std::span<const std::string_view> known) {
  if (auto name = closest_name(given, known)) return fmt::format("did you mean '{}'?", *name);
  return fmt::format("use one of: {}", join_names(known));
}

} // namespace twocs::config::detail
