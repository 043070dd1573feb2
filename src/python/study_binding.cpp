// _twocs.sweep and _twocs.validate: a study's results CSV and a validation file's rows, through
// the code `twocs sweep` and `twocs validate` run.
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include <pybind11/stl.h>

#include <twocs/cli/app.hpp>
#include <twocs/config/study.hpp>
#include <twocs/sweep/sweep.hpp>

#include "bindings.hpp"
#include "cli/validate_command.hpp"

namespace py = pybind11;

namespace twocs::python {
namespace {

/// `twocs run ARGS` in a scenario's forked child: the command line's own code and exit codes,
/// its error line on the child's stderr (the CSV's `reason`), and no exec of another program.
int run_in_child(const std::vector<std::string>& argv) {
  std::vector<const char*> args;
  args.reserve(argv.size());
  for (const std::string& a : argv) args.push_back(a.c_str());
  std::ostringstream ignored; // --quiet: nothing is printed
  const int code = cli::run_cli(static_cast<int>(args.size()), args.data(), ignored, std::cerr);
  std::cerr.flush();
  return code;
}

/// Runs the study's unfinished scenarios into `output` like `twocs sweep STUDY -o OUTPUT`;
/// returns false when interrupted (SIGINT, SIGTERM), the CSV then resumable.
bool sweep(const std::string& study_file, const std::string& output, std::size_t jobs, double timeout_s,
           bool progress) {
  const config::Study study = config::load_study(study_file);
  sweep::SweepOptions options;
  options.output = output;
  const std::filesystem::path temp = std::filesystem::temp_directory_path();
  (void)sweep::remove_stale_work_dirs(temp);
  options.work_dir = sweep::work_dir_of(temp, ::getpid());
  options.jobs = jobs > 0 ? jobs : std::max(1U, std::thread::hardware_concurrency()); // 0: all cores, as the CLI
  options.timeout_s = timeout_s;
  options.run_in_child = run_in_child;
  std::ostringstream silent;
  const py::gil_scoped_release unlocked; // children fork from this thread; no Python runs meanwhile
  const sweep::SweepTotals totals = sweep::run_sweep(study, options, progress ? std::cerr : silent);
  return !totals.interrupted;
}

/// `twocs validate --json`'s document for the selected runs of `file` (none: the CLI's default).
std::string validate(const std::optional<std::string>& file, const std::vector<std::string>& overrides,
                     const std::vector<std::string>& runs, const std::string& fold) {
  cli::ValidateOptions options;
  if (file) options.file = *file;
  options.overrides = overrides;
  options.only = runs;
  options.fold = cli::parse_fold_mode(fold);
  const auto log = make_logger();
  const py::gil_scoped_release unlocked;
  return cli::validation_json(cli::run_validation(options, *log));
}

} // namespace

void bind_studies(py::module_& module) {
  module.def("sweep", &sweep, py::arg("study_file"), py::arg("output"), py::arg("jobs"), py::arg("timeout_s"),
             py::arg("progress"), "Runs a study into a CSV (twocs.sweep wraps it)");
  module.def("validate", &validate, py::arg("file"), py::arg("overrides"), py::arg("runs"), py::arg("fold"),
             "Simulates a validation file's runs (twocs.validate wraps it)");
}

} // namespace twocs::python
