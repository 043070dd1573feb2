// "Did you mean ...?": the closest known name to a misspelt key or enum value.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace twocs::config::detail {

/// The known name nearest to `given` by edit distance (Levenshtein, case-insensitive), if it
/// is close enough to be a likely typo.
[[nodiscard]] std::optional<std::string_view> closest_name(std::string_view given,
                                                           std::span<const std::string_view> known);

/// "a, b, c".
[[nodiscard]] std::string join_names(std::span<const std::string_view> names);

/// "did you mean 'hidden'?" when a close name exists, else "use one of: a, b, c".
[[nodiscard]] std::string suggest(std::string_view given, std::span<const std::string_view> known);

} // namespace twocs::config::detail
