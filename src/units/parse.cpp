#include <twocs/units/parse.hpp>

#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>

#include <fmt/format.h>

namespace twocs::units {
namespace {

struct SplitQuantity {
  double number;
  std::string_view unit;
  std::size_t unit_offset;
};

bool is_space(char c) { return c == ' ' || c == '\t'; }

/// Splits "  300 GB/s " into 300 and "GB/s"; rejects a missing number or unit.
SplitQuantity split(std::string_view text, std::string_view example) {
  std::size_t pos = 0;
  while (pos < text.size() && is_space(text[pos])) ++pos;
  std::size_t end = text.size();
  while (end > pos && is_space(text[end - 1])) --end;
  if (pos == end) throw UnitError(fmt::format("empty quantity; write a number with its unit, e.g. '{}'", example), 0);
  double number = 0;
  const char* first = text.data() + pos;
  const char* last = text.data() + end;
  // Parse the longest numeric prefix. from_chars would take "5e" of "5exa", so it is tried
  // on the mantissa and exponent separately.
  std::size_t num_end = pos;
  while (num_end < end && (std::isdigit(static_cast<unsigned char>(text[num_end])) || text[num_end] == '.' ||
                           ((text[num_end] == '-' || text[num_end] == '+') && num_end == pos)))
    ++num_end;
  if (num_end + 1 < end && (text[num_end] == 'e' || text[num_end] == 'E')) {
    std::size_t exp = num_end + 1;
    if (exp < end && (text[exp] == '+' || text[exp] == '-')) ++exp;
    if (exp < end && std::isdigit(static_cast<unsigned char>(text[exp]))) {
      while (exp < end && std::isdigit(static_cast<unsigned char>(text[exp]))) ++exp;
      num_end = exp;
    }
  }
  auto [ptr, ec] = std::from_chars(first, text.data() + num_end, number);
  if (ec != std::errc() || ptr != text.data() + num_end || num_end == pos)
    throw UnitError(fmt::format("'{}' does not start with a number; write e.g. '{}'", text, example), pos);
  if (!std::isfinite(number)) throw UnitError(fmt::format("'{}' is not a finite number", text), pos);
  std::size_t unit_pos = num_end;
  while (unit_pos < end && is_space(text[unit_pos])) ++unit_pos;
  if (unit_pos == end)
    throw UnitError(fmt::format("'{}' has no unit; write e.g. '{}'", std::string_view(first, last - first), example),
                    end);
  return {number, text.substr(unit_pos, end - unit_pos), unit_pos};
}

struct Prefix {
  double factor;
  std::size_t length;
};

/// Reads a decimal (k M G T P) or binary (Ki Mi Gi Ti Pi) prefix at the start of `unit`.
std::optional<Prefix> read_prefix(std::string_view unit, bool allow_binary) {
  if (unit.empty()) return Prefix{1.0, 0};
  if (allow_binary && unit.starts_with("Ki")) return Prefix{1024.0, 2}; // IEC 80000-13: Ki, no decimal 'K'
  double decimal = 0;
  switch (unit[0]) {
  case 'k': decimal = 1e3; break;
  case 'M': decimal = 1e6; break;
  case 'G': decimal = 1e9; break;
  case 'T': decimal = 1e12; break;
  case 'P': decimal = 1e15; break;
  case 'E': decimal = 1e18; break;
  default: return Prefix{1.0, 0};
  }
  if (allow_binary && unit.size() > 1 && unit[1] == 'i') {
    const double steps = std::round(std::log10(decimal) / 3.0);
    return Prefix{std::pow(1024.0, steps), 2};
  }
  return Prefix{decimal, 1};
}

[[noreturn]] void bad_unit(std::string_view unit, std::size_t offset, std::string_view kind, std::string_view allowed,
                           std::string_view example) {
  std::string hint;
  if (!unit.empty() && unit[0] == 'K')
    hint = " ('K' is ambiguous: use 'k' for 1000 or 'Ki' for 1024)";
  else if (unit.find("FLOPs") != std::string_view::npos)
    hint = " ('FLOPs' reads as a count of operations: write 'FLOP' for a count or 'FLOP/s' for a rate)";
  throw UnitError(fmt::format("unknown {} unit '{}'{}; expected {} (e.g. '{}')", kind, unit, hint, allowed, example),
                  offset);
}

/// Parses "<prefix>B" or "<prefix>b" (bits) into a factor in bytes. Returns the characters used.
std::optional<std::pair<double, std::size_t>> read_size_unit(std::string_view unit) {
  auto prefix = read_prefix(unit, true);
  if (!prefix || prefix->length >= unit.size()) return std::nullopt;
  const char symbol = unit[prefix->length];
  if (symbol == 'B') return std::pair{prefix->factor, prefix->length + 1};
  if (symbol == 'b') return std::pair{prefix->factor / 8.0, prefix->length + 1};
  return std::nullopt;
}

/// The number times its unit's factor, refused when the product overflows a double
/// ("1e308EB"): an infinite size or rate would stall or crash the simulation.
double scaled(const SplitQuantity& q, double factor, std::string_view text) {
  const double value = q.number * factor;
  if (!std::isfinite(value)) throw UnitError(fmt::format("'{}' is too large to represent", text), 0);
  return value;
}

constexpr std::string_view size_units = "B, kB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, or bits b, kb, Mb, Gb, Tb";

} // namespace

Bytes parse_bytes(std::string_view text) {
  const auto q = split(text, example_bytes);
  const auto size = read_size_unit(q.unit);
  if (!size || size->second != q.unit.size()) bad_unit(q.unit, q.unit_offset, "size", size_units, example_bytes);
  return Bytes(scaled(q, size->first, text));
}

namespace {

/// 1024 to the power of nccl-tests' size letter (src/common.cu, parsesize: "We use the binary
/// system, so M=Mebibytes and G=Gibibytes"; K, M, G there, T added here for terabyte ranges).
std::optional<double> nccl_size_letter(char letter) {
  switch (std::tolower(static_cast<unsigned char>(letter))) {
  case 'k': return 1024.0;
  case 'm': return 1024.0 * 1024.0;
  case 'g': return 1024.0 * 1024.0 * 1024.0;
  case 't': return 1024.0 * 1024.0 * 1024.0 * 1024.0;
  default: return std::nullopt;
  }
}

} // namespace

Bytes parse_nccl_bytes(std::string_view text) {
  std::size_t pos = 0;
  std::size_t end = text.size();
  while (pos < end && is_space(text[pos])) ++pos;
  while (end > pos && is_space(text[end - 1])) --end;
  if (pos == end) throw UnitError("empty size; write bytes (8), 128K, 1M, 8G or a unit such as 8MiB", 0);
  const std::size_t sign = text[pos] == '-' || text[pos] == '+' ? 1 : 0;
  std::size_t num_end = pos + sign;
  while (num_end < end && (std::isdigit(static_cast<unsigned char>(text[num_end])) || text[num_end] == '.')) ++num_end;
  double number = 0;
  const char* first = text.data() + pos + (text[pos] == '+' ? 1 : 0); // from_chars takes '-' but not '+'
  const auto [ptr, ec] = std::from_chars(first, text.data() + num_end, number);
  if (num_end == pos + sign || ec != std::errc() || ptr != text.data() + num_end) return parse_bytes(text);
  std::size_t letter = num_end;
  while (letter < end && is_space(text[letter])) ++letter;
  if (letter == end) return Bytes(std::trunc(number));
  if (letter + 1 != end) return parse_bytes(text); // a unit: "8MiB", "1GB"
  if (const auto factor = nccl_size_letter(text[letter])) return Bytes(std::trunc(number * *factor));
  if (text[letter] == 'B' || text[letter] == 'b') return parse_bytes(text); // "512B", "8b" (bits)
  throw UnitError(
      fmt::format("unknown size suffix '{}'; nccl-tests' suffixes are K, M, G and T (powers of 1024)", text[letter]),
      letter);
}

ByteRate parse_byte_rate(std::string_view text) {
  const auto q = split(text, example_byte_rate);
  const auto size = read_size_unit(q.unit);
  if (size) {
    const auto rest = q.unit.substr(size->second);
    if (rest == "/s" || rest == "ps") return ByteRate(scaled(q, size->first, text));
  }
  bad_unit(q.unit, q.unit_offset, "bandwidth", "a size unit followed by '/s' or 'ps' (GB/s, GBps, Gb/s, Gbps)",
           example_byte_rate);
}

Flops parse_flops(std::string_view text) {
  const auto q = split(text, example_flops);
  const auto prefix = read_prefix(q.unit, false);
  if (prefix && q.unit.substr(prefix->length) == "FLOP") return Flops(scaled(q, prefix->factor, text));
  bad_unit(q.unit, q.unit_offset, "compute", "FLOP with a decimal prefix (GFLOP, TFLOP, PFLOP)", example_flops);
}

FlopRate parse_flop_rate(std::string_view text) {
  const auto q = split(text, example_flop_rate);
  const auto prefix = read_prefix(q.unit, false);
  if (prefix) {
    const auto rest = q.unit.substr(prefix->length);
    if (rest == "FLOP/s" || rest == "FLOPS") return FlopRate(scaled(q, prefix->factor, text));
  }
  bad_unit(q.unit, q.unit_offset, "compute rate", "FLOP/s with a decimal prefix (TFLOP/s, PFLOP/s)", example_flop_rate);
}

Seconds parse_seconds(std::string_view text) {
  const auto q = split(text, example_seconds);
  if (q.unit == "s") return Seconds(q.number);
  if (q.unit == "ms") return Seconds(q.number * 1e-3);
  if (q.unit == "us" || q.unit == "\u00b5s") return Seconds(q.number * 1e-6);
  if (q.unit == "ns") return Seconds(q.number * 1e-9);
  bad_unit(q.unit, q.unit_offset, "time", "ns, us, ms or s", example_seconds);
}

} // namespace twocs::units
