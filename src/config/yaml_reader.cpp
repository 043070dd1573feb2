#include "yaml_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "yaml_suggest.hpp"

namespace twocs::config::detail {
namespace {

/// The value of `f` when it is a scalar; otherwise an error saying `expected` ("a whole number").
const YamlNode& need_scalar(const Field& f, std::string_view expected) {
  const YamlNode& v = *f.value;
  if (v.kind == YamlNode::Kind::null)
    fail_at(f.where(), f.path, fmt::format("{} has no value", f.path),
            fmt::format("give {} or remove the key", expected));
  if (v.kind != YamlNode::Kind::scalar)
    fail_at(f.where(), f.path, fmt::format("{} must be {}, got {}", f.path, expected, describe(v)),
            fmt::format("write {} here", expected));
  return v;
}

bool is_integer_text(std::string_view text) {
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) text.remove_prefix(1);
  if (text.empty()) return false;
  for (char c : text)
    if (c < '0' || c > '9') return false;
  return true;
}

std::optional<double> parse_real(std::string_view text) {
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  double number = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, number);
  if (ec != std::errc() || ptr != end || text.empty()) return std::nullopt;
  return number;
}

/// The fix for a real number where a whole number of at least `low` belongs: the whole numbers
/// nearest to it that a count may be, never the rejected value itself.
std::string whole_number_fix(std::optional<double> real, std::int64_t low) {
  constexpr double beyond = 9223372036854775808.0; // 2^63: no count reaches it
  if (!real || !std::isfinite(*real)) return "write a whole number, e.g. 8";
  if (std::fabs(*real) >= beyond)
    return fmt::format("counts are whole numbers of at most {}: check the value",
                       std::numeric_limits<std::int64_t>::max());
  const double below = std::max(std::floor(*real), static_cast<double>(low));
  const double above = std::max(std::ceil(*real), static_cast<double>(low));
  if (below == above) return fmt::format("counts are whole numbers: write {:.0f}", below);
  return fmt::format("counts are whole numbers: write {:.0f} or {:.0f}", below, above);
}

/// A whole number of at least `low` (1 for counts, 0 where none is allowed).
std::int64_t read_whole(const Field& f, std::int64_t low) {
  const YamlNode& v = need_scalar(f, "a whole number");
  if (v.is_string)
    fail_at(f.where(), f.path, fmt::format("{} must be a whole number, got {}", f.path, describe(v)),
            is_integer_text(v.scalar) ? fmt::format("write {} without quotes", v.scalar)
                                      : std::string("write a whole number, e.g. 8"));
  if (!is_integer_text(v.scalar))
    fail_at(f.where(), f.path, fmt::format("{} must be a whole number, got {}", f.path, describe(v)),
            whole_number_fix(parse_real(v.scalar), low));
  std::string_view digits = v.scalar;
  if (digits[0] == '+') digits.remove_prefix(1);
  std::int64_t count = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), count);
  if (ec != std::errc())
    fail_at(f.where(), f.path, fmt::format("{} = {} is too large", f.path, v.scalar),
            fmt::format("give a count below {}", std::numeric_limits<std::int64_t>::max()));
  if (count < low && low == 1)
    fail_at(f.where(), f.path, fmt::format("{} must be positive, got {}", f.path, count), "give a count of at least 1");
  if (count < low)
    fail_at(f.where(), f.path, fmt::format("{} must be at least {}, got {}", f.path, low, count),
            fmt::format("give a whole number of at least {}", low));
  return count;
}

std::string last_segment(const std::string& path) {
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

} // namespace

const SourceLocation& Field::where() const { return value->kind == YamlNode::Kind::null ? key_where : value->where; }

void fail_at(const SourceLocation& where, const std::string& key_path, std::string problem, std::string fix) {
  InputError error(std::move(problem), key_path, std::move(fix));
  error.set_location(where);
  throw error;
}

MappingReader::MappingReader(Field field, std::span<const std::string_view> known)
    : field_(std::move(field)), what_(field_.path) {
  const YamlNode& v = *field_.value;
  if (v.kind != YamlNode::Kind::mapping)
    fail_at(field_.where(), field_.path, fmt::format("{} must be a mapping of keys, got {}", field_.path, describe(v)),
            fmt::format("give its keys, e.g. '{}: {{{}: ...}}', or remove it", last_segment(field_.path),
                        known.empty() ? "key" : known.front()));
  check_keys(known);
}

MappingReader::MappingReader(const YamlNode& root, std::span<const std::string_view> known, std::string_view what)
    : field_{"", &root, root.where}, what_(what) {
  if (root.kind != YamlNode::Kind::mapping)
    fail_at(root.where, "", fmt::format("the top level of {} must be a mapping, got {}", what, describe(root)),
            "start with 'key: value' lines");
  check_keys(known);
}

void MappingReader::check_keys(std::span<const std::string_view> known) const {
  for (const YamlEntry& entry : field_.value->entries) {
    bool is_known = false;
    for (std::string_view k : known) is_known = is_known || k == entry.key;
    if (is_known) continue;
    const std::string where =
        field_.path.empty() ? fmt::format("at the top level of {}", what_) : fmt::format("in {}", field_.path);
    fail_at(entry.key_where, field_.path, fmt::format("unknown key '{}' {}", entry.key, where),
            closest_name(entry.key, known) ? suggest(entry.key, known)
                                           : fmt::format("the keys here are: {}", join_names(known)));
  }
}

std::string MappingReader::child_path(std::string_view key) const {
  return field_.path.empty() ? std::string(key) : fmt::format("{}.{}", field_.path, key);
}

std::optional<Field> MappingReader::optional(std::string_view key) const {
  const YamlEntry* entry = field_.value->find(key);
  if (!entry) return std::nullopt;
  return Field{child_path(key), &entry->value, entry->key_where};
}

Field MappingReader::required(std::string_view key, std::string_view example) const {
  if (auto f = optional(key)) return *f;
  fail_at(field_.key_where, field_.path, fmt::format("{} is missing the required key '{}'", what_, key),
          fmt::format("add '{}: {}'", key, example));
}

std::int64_t read_count(const Field& f) { return read_whole(f, 1); }

std::int64_t read_count_or_zero(const Field& f) { return read_whole(f, 0); }

std::int64_t read_count_up_to(const Field& f, std::int64_t limit, std::int64_t low) {
  const std::int64_t count = read_whole(f, low);
  if (count > limit)
    fail_at(f.where(), f.path, fmt::format("{} = {} is beyond what twocs models (at most {})", f.path, count, limit),
            "check the value: it is larger than any machine or model built");
  return count;
}

bool read_bool(const Field& f) {
  const YamlNode& v = need_scalar(f, "true or false");
  if (!v.is_string && (v.scalar == "true" || v.scalar == "false")) return v.scalar == "true";
  fail_at(f.where(), f.path, fmt::format("{} must be true or false, got {}", f.path, describe(v)),
          v.is_string ? "write true or false without quotes" : "write true or false");
}

double read_real(const Field& f, std::string_view fix) {
  const YamlNode& v = need_scalar(f, "a number");
  const auto real = v.is_string ? std::nullopt : parse_real(v.scalar);
  if (!real || !std::isfinite(*real))
    fail_at(f.where(), f.path, fmt::format("{} must be a number, got {}", f.path, describe(v)),
            v.is_string && parse_real(v.scalar) ? std::string("write the number without quotes")
            : fix.empty()                       ? std::string("write a plain number such as 0.8")
                                                : std::string(fix));
  return *real;
}

double read_real_between(const Field& f, double low, double high, std::string_view fix) {
  const double value = read_real(f);
  if (value < low || value > high)
    fail_at(f.where(), f.path, fmt::format("{} must be between {} and {}, got {}", f.path, low, high, value),
            std::string(fix));
  return value;
}

std::string read_text(const Field& f) {
  const YamlNode& v = need_scalar(f, "a name");
  if (v.scalar.empty())
    fail_at(f.where(), f.path, fmt::format("{} must not be empty", f.path), "give a name, or remove the key");
  return v.scalar;
}

std::size_t read_choice(const Field& f, std::span<const std::string_view> names) {
  const YamlNode& v = need_scalar(f, fmt::format("one of {}", join_names(names)));
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == v.scalar) return i;
  fail_at(f.where(), f.path, fmt::format("{} cannot be '{}'; allowed values: {}", f.path, v.scalar, join_names(names)),
          closest_name(v.scalar, names) ? suggest(v.scalar, names) : fmt::format("use one of: {}", join_names(names)));
}

std::vector<Field> read_list(const Field& f) {
  const YamlNode& v = *f.value;
  if (v.kind != YamlNode::Kind::sequence)
    fail_at(f.where(), f.path, fmt::format("{} must be a list, got {}", f.path, describe(v)),
            "write a list in brackets, e.g. [12, 12, 12]");
  std::vector<Field> items;
  items.reserve(v.items.size());
  for (std::size_t i = 0; i < v.items.size(); ++i)
    items.push_back(Field{fmt::format("{}[{}]", f.path, i), &v.items[i], v.items[i].where});
  return items;
}

std::vector<std::pair<std::string, Field>> read_entries(const Field& f) {
  const YamlNode& v = *f.value;
  if (v.kind != YamlNode::Kind::mapping)
    fail_at(f.where(), f.path, fmt::format("{} must be a mapping, got {}", f.path, describe(v)),
            "write it in braces, e.g. {bf16: 312TFLOP/s}");
  std::vector<std::pair<std::string, Field>> entries;
  for (const YamlEntry& e : v.entries)
    entries.emplace_back(e.key, Field{fmt::format("{}.{}", f.path, e.key), &e.value, e.key_where});
  return entries;
}

std::filesystem::path beside(const std::string& source, const std::string& relative) {
  const bool from_file = !source.empty() && source.front() != '<' && !source.starts_with("--set");
  return from_file ? std::filesystem::path(source).parent_path() / relative : std::filesystem::path(relative);
}

} // namespace twocs::config::detail
