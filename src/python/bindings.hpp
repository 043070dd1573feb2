// Private: the parts of the Python extension _twocs (docs/python.md), each adding its functions
// to the module. The package twocs (twocs/__init__.py) wraps them in Python objects and pandas.
#pragma once

#include <memory>

#include <pybind11/pybind11.h>
#include <spdlog/logger.h>

namespace twocs::python {

/// twocs.Error, twocs.InputError (a ValueError) and twocs.OutOfMemoryError (a RuntimeError),
/// carrying the message the command line prints for the same error (cli/error_message.hpp).
void bind_errors(pybind11::module_& module);

/// _twocs.run and the Run it returns: the JSON summary and the timeline's columns.
void bind_run(pybind11::module_& module);

/// _twocs.sweep (a study's CSV, each scenario in a forked copy of this process) and
/// _twocs.validate (the JSON of `twocs validate --json`).
void bind_studies(pybind11::module_& module);

/// Warnings and errors of a run, "twocs: ..." on stderr like the command line's; no progress.
[[nodiscard]] std::shared_ptr<spdlog::logger> make_logger();

} // namespace twocs::python
