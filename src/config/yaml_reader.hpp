// Strict, typed reading of a located YAML tree: mappings with a closed set of keys, positive
// counts, booleans, numbers and names from a fixed list (quantities: yaml_quantity.hpp). Every
// violation is an InputError at the offending key or character, naming the dotted key path.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "yaml_document.hpp"

namespace twocs::config::detail {

/// A value and the dotted key path it sits at ("training.parallelism.tensor").
struct Field {
  std::string path;
  const YamlNode* value = nullptr;
  SourceLocation key_where; // the key's location (a list element: its own)

  /// The value's location, or the key's when the key has no value.
  [[nodiscard]] const SourceLocation& where() const;
};

[[noreturn]] void fail_at(const SourceLocation& where, const std::string& key_path, std::string problem,
                          std::string fix);

/// A mapping with a closed set of keys: any other key is an InputError with a suggestion.
class MappingReader {
public:
  MappingReader(Field field, std::span<const std::string_view> known);
  /// The top level of a file (`what`: "the workload", "the platform").
  MappingReader(const YamlNode& root, std::span<const std::string_view> known, std::string_view what);

  [[nodiscard]] std::optional<Field> optional(std::string_view key) const;
  /// `example` shows a valid value in the fix ("96", "25GB/s").
  [[nodiscard]] Field required(std::string_view key, std::string_view example) const;

private:
  void check_keys(std::span<const std::string_view> known) const;
  [[nodiscard]] std::string child_path(std::string_view key) const;

  Field field_;
  std::string what_; // "training.parallelism", or "the workload" at the top level
};

/// A positive whole number (layers, devices, batch sizes).
[[nodiscard]] std::int64_t read_count(const Field& f);
/// A whole number that may be 0 (shared experts, MTP depths, a seed).
[[nodiscard]] std::int64_t read_count_or_zero(const Field& f);
/// A whole number of at least `low` and at most `limit`; above it the error says twocs models
/// no more.
[[nodiscard]] std::int64_t read_count_up_to(const Field& f, std::int64_t limit, std::int64_t low = 1);
[[nodiscard]] bool read_bool(const Field& f);
/// A finite real number without unit (efficiencies, ratios). `fix` says what to write instead
/// of text that is not a number (default: a plain number such as 0.8).
[[nodiscard]] double read_real(const Field& f, std::string_view fix = {});
/// A real number in [low, high]; outside it the error names the range and gives `fix`.
[[nodiscard]] double read_real_between(const Field& f, double low, double high, std::string_view fix);
/// A non-empty scalar, taken as text.
[[nodiscard]] std::string read_text(const Field& f);
/// One of `names`; returns its index.
[[nodiscard]] std::size_t read_choice(const Field& f, std::span<const std::string_view> names);
/// The elements of a list.
[[nodiscard]] std::vector<Field> read_list(const Field& f);
/// The keys and values of a mapping with free keys (e.g. one peak rate per dtype).
[[nodiscard]] std::vector<std::pair<std::string, Field>> read_entries(const Field& f);

/// An enumeration read by name: the names and values of `E` in the same order.
template <class E, std::size_t N>
[[nodiscard]] E read_enum(const Field& f, const std::array<std::string_view, N>& names,
                          const std::array<E, N>& values) {
  return values[read_choice(f, names)];
}

/// `relative` resolved against the folder of the input `source` names ("workloads/gpt3.yaml"),
/// or as it is when `source` is no file (an embedded input "<...>", a "--set ..." argument).
[[nodiscard]] std::filesystem::path beside(const std::string& source, const std::string& relative);

} // namespace twocs::config::detail
