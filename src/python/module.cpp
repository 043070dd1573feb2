// The extension _twocs: `import twocs` loads it from the package twocs/ beside it.
#include <spdlog/sinks/ostream_sink.h>

#include <iostream>

#include "bindings.hpp"

namespace twocs::python {

std::shared_ptr<spdlog::logger> make_logger() {
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(std::cerr, true);
  auto log = std::make_shared<spdlog::logger>("twocs", sink);
  log->set_pattern("twocs: %v");
  // A script calls run() many times: the command line's info lines (phases, fold choice) would
  // drown its output; warnings (approximate folding, --ignore-memory) still show.
  log->set_level(spdlog::level::warn);
  return log;
}

} // namespace twocs::python

PYBIND11_MODULE(_twocs, module) {
  module.doc() = "twocs simulator core (use the package twocs, docs/python.md)";
  twocs::python::bind_errors(module);
  twocs::python::bind_run(module);
  twocs::python::bind_studies(module);
}
