#include <twocs/config/profile_csv.hpp>

#include <array>
#include <charconv>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include <twocs/error.hpp>
#include <twocs/units/parse.hpp>

#include "kernel_shape.hpp"
#include "text_check.hpp"
#include "yaml_suggest.hpp"

namespace twocs::config {
namespace {

using detail::join_names;

constexpr std::array<std::string_view, 8> column_names = {"op",   "shape",        "dtype",   "measured_time",
                                                          "name", "accumulation", "scaling", "kernel"};
enum Column : std::size_t { op, shape, dtype, measured_time, name, accumulation, scaling, kernel };
constexpr std::size_t required_columns = 4; // all but `name`, `accumulation`, `scaling` and `kernel`

struct Field {
  std::string text;
  int column = 1; // 1-based column of the field's first character
  bool quoted = false;
};

[[noreturn]] void fail(const std::string& file, int line, int column, std::string problem, std::string fix) {
  InputError error(std::move(problem), {}, std::move(fix));
  error.set_location({file, line, column});
  throw error;
}

/// Splits one line into RFC 4180 fields (Shafranovich, "Common Format and MIME Type for CSV
/// Files", 2005): commas separate, a field in double quotes may hold commas, "" is one quote.
std::vector<Field> split_fields(std::string_view line, const std::string& file, int line_number) {
  std::vector<Field> fields;
  std::size_t i = 0;
  while (true) {
    Field f;
    f.column = static_cast<int>(i) + 1;
    if (i < line.size() && line[i] == '"') {
      f.quoted = true;
      ++i;
      while (true) {
        if (i >= line.size())
          fail(file, line_number, f.column, "unterminated quoted field", "close the quote: \"m=4096,n=4096,k=4096\"");
        if (line[i] == '"' && i + 1 < line.size() && line[i + 1] == '"') {
          f.text += '"';
          i += 2;
        } else if (line[i] == '"') {
          ++i;
          break;
        } else {
          f.text += line[i++];
        }
      }
      if (i < line.size() && line[i] != ',')
        fail(file, line_number, static_cast<int>(i) + 1, "unexpected text after a quoted field",
             "put a comma after the closing quote");
    } else {
      while (i < line.size() && line[i] != ',') f.text += line[i++];
    }
    fields.push_back(std::move(f));
    if (i >= line.size()) return fields;
    ++i; // the comma
  }
}

/// Column index of each known name in the header.
std::array<std::optional<std::size_t>, column_names.size()> read_header(const std::vector<Field>& header,
                                                                        const std::string& file, int line) {
  std::array<std::optional<std::size_t>, column_names.size()> at;
  for (std::size_t i = 0; i < header.size(); ++i) {
    std::size_t known = column_names.size();
    for (std::size_t c = 0; c < column_names.size(); ++c)
      if (column_names[c] == header[i].text) known = c;
    if (known == column_names.size())
      fail(file, line, header[i].column, fmt::format("unknown column '{}' in the profile header", header[i].text),
           detail::closest_name(header[i].text, column_names)
               ? detail::suggest(header[i].text, column_names)
               : fmt::format("the columns are: {}", join_names(column_names)));
    if (at[known])
      fail(file, line, header[i].column, fmt::format("column '{}' appears twice", header[i].text),
           "name each column once");
    at[known] = i;
  }
  for (std::size_t c = 0; c < required_columns; ++c)
    if (!at[c])
      fail(file, line, 1, fmt::format("the profile header lacks the column '{}'", column_names[c]),
           "start the file with the header line op,shape,dtype,measured_time");
  return at;
}

/// An FP8 GEMM row's cell `column` (accumulation, scaling): `empty` when blank, else one of the
/// two `names` (their `values`); on any other row it must be blank.
template <typename Enum>
Enum read_fp8_cell(const Field& cell, std::string_view column, const hardware::KernelMeasurement& m,
                   std::array<std::string_view, 2> names, std::array<Enum, 2> values, Enum empty,
                   const std::string& file, int line) {
  if (cell.text.empty()) return empty;
  if (!m.is_fp8_gemm())
    fail(file, line, cell.column, fmt::format("{} '{}' on a row that is not an FP8 GEMM", column, cell.text),
         fmt::format("leave the {} cell empty on bf16, fp16, fp32 and memory-bound rows", column));
  for (std::size_t i = 0; i < names.size(); ++i)
    if (cell.text == names[i]) return values[i];
  fail(file, line, cell.column, fmt::format("unknown {} '{}'; allowed: {}, {}", column, cell.text, names[0], names[1]),
       fmt::format("write {} or {} (docs/operator-models.md, \"Profiles\")", names[0], names[1]));
}

/// The measured_time cell: a positive time with its unit, between 1 ns and 1 h.
units::Seconds read_time(const Field& time, const std::string& file, int line) {
  double bare = 0;
  const char* end = time.text.data() + time.text.size();
  if (!time.text.empty() && std::from_chars(time.text.data(), end, bare).ptr == end)
    fail(file, line, time.column, fmt::format("measured_time needs a unit, got '{}'", time.text),
         "write the time with its unit, e.g. 1.234ms or 56.7us");
  units::Seconds seconds{0};
  try {
    seconds = units::parse_seconds(time.text);
  } catch (const units::UnitError& e) {
    fail(file, line, time.column + static_cast<int>(e.offset()) + (time.quoted ? 1 : 0),
         fmt::format("measured_time: {}", e.what()), "write the time with its unit, e.g. 1.234ms or 56.7us");
  }
  if (!(seconds.value() > 0))
    fail(file, line, time.column, "measured_time must be positive", "write the measured time, e.g. 1.234ms");
  // A kernel launch takes microseconds and no single kernel an hour: outside 1 ns .. 1 h the
  // unit is wrong, and a denormal or huge time would break the fit.
  if (seconds.value() < 1e-9 || seconds.value() > 3600.0)
    fail(file, line, time.column, fmt::format("measured_time '{}' is outside 1ns to 1h", time.text),
         "check the unit: write e.g. 1.234ms or 56.7us");
  return seconds;
}

hardware::KernelMeasurement read_row(const std::vector<Field>& row,
                                     const std::array<std::optional<std::size_t>, column_names.size()>& at,
                                     const std::string& file, int line) {
  const auto cell = [&](Column c) -> const Field& { return row[*at[c]]; };
  hardware::KernelMeasurement m;
  if (at[name]) m.name = cell(name).text;
  const Field& kind = cell(op);
  const auto parsed_kind = detail::parse_kernel_kind(kind.text);
  if (!parsed_kind)
    fail(file, line, kind.column,
         fmt::format("unknown op '{}'; allowed: {}", kind.text, join_names(detail::kernel_kind_names())),
         detail::suggest(kind.text, detail::kernel_kind_names()));
  m.kind = *parsed_kind;
  const Field& type = cell(dtype);
  const auto parsed_dtype = model::parse_dtype(type.text);
  if (!parsed_dtype)
    fail(file, line, type.column, fmt::format("unknown dtype '{}'; allowed: bf16, fp16, fp32, fp8", type.text),
         "write one of bf16, fp16, fp32, fp8");
  m.dtype = *parsed_dtype;
  const Field& dims = cell(shape);
  try {
    detail::parse_kernel_shape(dims.text, m);
  } catch (const detail::ShapeError& e) {
    fail(file, line, dims.column + static_cast<int>(e.offset()) + (dims.quoted ? 1 : 0), e.what(), e.fix());
  }
  m.time = read_time(cell(measured_time), file, line);
  using hardware::Fp8Accumulation;
  using hardware::Fp8Scaling;
  if (at[accumulation])
    m.accumulation = read_fp8_cell(cell(accumulation), "accumulation", m, {"split", "fast"},
                                   {Fp8Accumulation::split, Fp8Accumulation::fast}, Fp8Accumulation::any, file, line);
  if (at[scaling])
    m.scaling = read_fp8_cell(cell(scaling), "scaling", m, {"tensorwise", "blockwise"},
                              {Fp8Scaling::tensorwise, Fp8Scaling::blockwise}, Fp8Scaling::tensorwise, file, line);
  if (at[kernel] && !cell(kernel).text.empty()) {
    // The fused attention implementation the row measured, as a platform's inline rows name it.
    if (!model::is_fused_attention(m.kind))
      fail(file, line, cell(kernel).column,
           fmt::format("kernel '{}' on a {} row: it names a fused attention implementation", cell(kernel).text,
                       kind.text),
           "leave the kernel cell empty except on flash_forward and flash_backward rows");
    m.kernel = cell(kernel).text;
  }
  return m;
}

} // namespace

std::vector<hardware::KernelMeasurement> parse_profile_csv(const InputText& csv) {
  if (const auto bad = detail::find_bad_byte(csv.text))
    fail(csv.name, bad->line, bad->column, detail::describe_bad_byte(*bad),
         "a profile is UTF-8 text (scripts/profile_operators.py); check that this is the intended file");
  std::vector<hardware::KernelMeasurement> rows;
  std::optional<std::array<std::optional<std::size_t>, column_names.size()>> at;
  std::size_t columns = 0;
  std::size_t start = 0;
  int line = 0;
  while (start < csv.text.size()) {
    std::size_t end = csv.text.find('\n', start);
    if (end == std::string::npos) end = csv.text.size();
    std::string_view text(csv.text.data() + start, end - start);
    start = end + 1;
    ++line;
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (text.find_first_not_of(" \t") == std::string_view::npos || text.front() == '#') continue;
    const std::vector<Field> fields = split_fields(text, csv.name, line);
    if (!at) {
      at = read_header(fields, csv.name, line);
      columns = fields.size();
      continue;
    }
    if (fields.size() != columns)
      fail(csv.name, line, 1, fmt::format("the row has {} fields but the header names {}", fields.size(), columns),
           "give one value per column; quote a shape that contains commas: \"m=4096,n=4096,k=4096\"");
    rows.push_back(read_row(fields, *at, csv.name, line));
  }
  if (rows.empty())
    fail(csv.name, std::max(line, 1), 1, "the profile has no measurements",
         "write a header line op,shape,dtype,measured_time and one line per kernel (scripts/profile_operators.py)");
  return rows;
}

} // namespace twocs::config
