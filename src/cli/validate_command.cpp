#include "validate_command.hpp"

#include <algorithm>
#include <map>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <twocs/error.hpp>
#include <twocs/fileio/output_file.hpp>
#include <twocs/units/format.hpp>

namespace twocs::cli {
namespace {

std::filesystem::path validation_file(const ValidateOptions& options) {
  if (options.file) return *options.file;
  const std::filesystem::path fallback = std::filesystem::path("workloads") / "validation" / "runs.yaml";
  if (!std::filesystem::exists(fallback))
    throw InputError("no validation file given, and workloads/validation/runs.yaml is not in the current folder", {},
                     "name one: twocs validate workloads/validation/runs.yaml");
  return fallback;
}

void check_selection(const ValidateOptions& options, const config::ValidationSuite& suite) {
  for (const std::string& name : options.only) {
    const bool known = std::any_of(suite.runs.begin(), suite.runs.end(),
                                   [&](const config::ValidationRun& run) { return run.name == name; });
    if (!known)
      throw InputError(fmt::format("--run {}: the validation file has no run of that name", name), {},
                       "list the names with `twocs validate` (every run) and pick one");
  }
}

} // namespace

std::vector<ValidationRow> run_validation(const ValidateOptions& options, spdlog::logger& log) {
  const config::ValidationSuite suite = config::load_validation_suite(validation_file(options));
  check_selection(options, suite);
  std::vector<ValidationRow> rows;
  for (const config::ValidationRun& run : suite.runs) {
    if (!options.only.empty() && std::find(options.only.begin(), options.only.end(), run.name) == options.only.end())
      continue;
    for (ValidationRow& row : simulate_validation_run(run, options, log)) rows.push_back(std::move(row));
  }
  return rows;
}

CLI::App* add_validate_command(CLI::App& app, ValidateOptions& o) {
  auto* cmd = app.add_subcommand("validate", "Simulate published training runs and compare with their measured times");
  cmd->add_option("file", o.file, "Validation file (default: workloads/validation/runs.yaml)");
  cmd->add_option("--json", o.json, "Write the results as JSON to FILE");
  cmd->add_option("--set", o.overrides,
                  "Override an input key in every run, e.g. device.comm_interference.compute_slowdown=0")
      ->take_all()
      ->allow_extra_args(false);
  cmd->add_option("--run", o.only, "Simulate only the run of this name (repeatable)")
      ->take_all()
      ->allow_extra_args(false);
  const std::map<std::string, FoldMode> fold_modes{
      {"auto", FoldMode::automatic}, {"on", FoldMode::on}, {"off", FoldMode::off}, {"shared", FoldMode::shared}};
  cmd->add_option("--fold", o.fold,
                  "Simulate one device per pipeline stage: auto (runs above 2M tasks), on, off, shared (on, with the "
                  "peers' traffic on the links they share)")
      ->transform(CLI::CheckedTransformer(fold_modes, CLI::ignore_case));
  cmd->add_option("--max-tasks", o.max_tasks, "Refuse runs that lower to more tasks than this (default 20000000)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--ignore-memory", o.ignore_memory, "Exit 0 even when a run does not fit in device memory");
  cmd->add_flag("--quiet,-q", o.quiet, "Print nothing but errors");
  return cmd;
}

void run_validate(const ValidateOptions& options, std::ostream& out, spdlog::logger& log) {
  const std::vector<ValidationRow> rows = run_validation(options, log);
  if (options.json) fileio::write_file_atomically(*options.json, validation_json(rows));
  if (!options.quiet) out << validation_table(rows);
  const auto too_big = std::find_if(rows.begin(), rows.end(), [](const ValidationRow& r) { return !r.fits; });
  if (too_big != rows.end() && !options.ignore_memory)
    throw OutOfMemoryError(fmt::format("run '{}' needs {} per device but the device has {}, yet it ran: the memory "
                                       "model overestimates (--ignore-memory to exit 0)",
                                       too_big->name, units::to_string(too_big->peak_memory),
                                       units::to_string(too_big->capacity)));
}

} // namespace twocs::cli
