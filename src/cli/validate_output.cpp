// The results of `twocs validate` as a terminal table and as JSON.
#include <algorithm>

#include <fmt/format.h>

#include <twocs/fileio/text_escape.hpp>
#include <twocs/units/format.hpp>

#include "validate_command.hpp"

namespace twocs::cli {
namespace {

using config::ValidationKind;

void append_stats_line(fmt::memory_buffer& out, std::string_view what, const ErrorStats& stats) {
  if (stats.rows == 0) return;
  fmt::format_to(std::back_inserter(out), "{}: mean absolute error {:.1f}%, max {:.1f}% ({} rows)\n", what,
                 100 * stats.mean_abs, 100 * stats.max_abs, stats.rows);
}

void append_json_stats(fmt::memory_buffer& out, std::string_view key, const ErrorStats& stats) {
  fmt::format_to(std::back_inserter(out), "  \"{}\": {{\"rows\": {}, \"mean_abs_error\": ", key, stats.rows);
  fileio::append_json_number(out, stats.mean_abs);
  fmt::format_to(std::back_inserter(out), ", \"max_abs_error\": ");
  fileio::append_json_number(out, stats.max_abs);
  fmt::format_to(std::back_inserter(out), "}}");
}

} // namespace

std::string validation_table(const std::vector<ValidationRow>& rows) {
  std::size_t name_width = 3, plan_width = 12;
  for (const ValidationRow& row : rows) {
    name_width = std::max(name_width, row.name.size());
    plan_width = std::max(plan_width, row.plan.size());
  }
  fmt::memory_buffer out;
  fmt::format_to(std::back_inserter(out), "{:<{}}  {:<{}}  {:>10}  {:>10}  {:>7}\n", "run", name_width,
                 "GPUs (t x p x d)", plan_width, "measured", "predicted", "error");
  for (const ValidationRow& row : rows) {
    fmt::format_to(std::back_inserter(out), "{:<{}}  {:<{}}  {:>10}  {:>10}  {:>+6.1f}%", row.name, name_width,
                   row.plan, plan_width, units::to_string(row.measured), units::to_string(row.predicted),
                   100 * row.error());
    if (row.measured_peak_memory)
      fmt::format_to(std::back_inserter(out), "  memory {} measured, {} predicted ({:+.1f}%)",
                     units::to_string(*row.measured_peak_memory), units::to_string(row.peak_memory),
                     100 * row.memory_error());
    if (!row.fits)
      fmt::format_to(std::back_inserter(out), "  does not fit: {} of {}", units::to_string(row.peak_memory),
                     units::to_string(row.capacity));
    fmt::format_to(std::back_inserter(out), "\n");
  }
  append_stats_line(out, "iteration time", error_stats(rows, ValidationKind::iteration));
  append_stats_line(out, "layer time", error_stats(rows, ValidationKind::layer));
  append_stats_line(out, "peak memory", memory_error_stats(rows));
  return fmt::to_string(out);
}

std::string validation_json(const std::vector<ValidationRow>& rows) {
  fmt::memory_buffer out;
  fmt::format_to(std::back_inserter(out), "{{\n  \"runs\": [");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ValidationRow& row = rows[i];
    fmt::format_to(std::back_inserter(out), "{}\n    {{\"name\": ", i == 0 ? "" : ",");
    fileio::append_json_string(out, row.name);
    fmt::format_to(std::back_inserter(out), ", \"citation\": ");
    fileio::append_json_string(out, row.citation);
    fmt::format_to(std::back_inserter(out),
                   ", \"kind\": \"{}\", \"plan\": ", row.kind == ValidationKind::iteration ? "iteration" : "layer");
    fileio::append_json_string(out, row.plan);
    fmt::format_to(std::back_inserter(out), ", \"measured_s\": ");
    fileio::append_json_number(out, row.measured.value());
    fmt::format_to(std::back_inserter(out), ", \"predicted_s\": ");
    fileio::append_json_number(out, row.predicted.value());
    fmt::format_to(std::back_inserter(out), ", \"error\": ");
    fileio::append_json_number(out, row.error());
    fmt::format_to(std::back_inserter(out),
                   ", \"folded\": {}, \"tasks\": {}, \"peak_memory_bytes\": ", row.folded ? "true" : "false",
                   row.tasks);
    fileio::append_json_number(out, row.peak_memory.value());
    fmt::format_to(std::back_inserter(out), ", \"fits\": {}", row.fits ? "true" : "false");
    if (row.measured_peak_memory) {
      fmt::format_to(std::back_inserter(out), ", \"measured_peak_memory_bytes\": ");
      fileio::append_json_number(out, row.measured_peak_memory->value());
      fmt::format_to(std::back_inserter(out), ", \"memory_error\": ");
      fileio::append_json_number(out, row.memory_error());
    }
    fmt::format_to(std::back_inserter(out), "}}");
  }
  fmt::format_to(std::back_inserter(out), "\n  ],\n");
  append_json_stats(out, "iteration", error_stats(rows, ValidationKind::iteration));
  fmt::format_to(std::back_inserter(out), ",\n");
  append_json_stats(out, "layer", error_stats(rows, ValidationKind::layer));
  fmt::format_to(std::back_inserter(out), ",\n");
  append_json_stats(out, "memory", memory_error_stats(rows));
  fmt::format_to(std::back_inserter(out), "\n}}\n");
  return fmt::to_string(out);
}

} // namespace twocs::cli
