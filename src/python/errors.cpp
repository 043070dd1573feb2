// Python exceptions for the errors a user can cause (include/twocs/error.hpp).
#include <Python.h>

#include <twocs/cli/error_message.hpp>
#include <twocs/error.hpp>

#include "bindings.hpp"

namespace py = pybind11;

namespace twocs::python {
namespace {

/// A new exception class `twocs.<name>` deriving from `bases`, added to `module`. The class is
/// kept alive for the life of the process (the translator raises it; never released, so that no
/// reference is dropped after the interpreter has finalized).
py::handle new_exception(py::module_& module, const char* name, const py::tuple& bases) {
  const std::string qualified = std::string("twocs.") + name;
  PyObject* type = PyErr_NewException(qualified.c_str(), bases.ptr(), nullptr);
  if (type == nullptr) throw py::error_already_set();
  module.attr(name) = py::handle(type);
  return type;
}

} // namespace

void bind_errors(py::module_& module) {
  static py::handle error; // the classes outlive the module's init: the translator raises them
  static py::handle input_error;
  static py::handle out_of_memory;
  error = new_exception(module, "Error", py::make_tuple(py::handle(PyExc_Exception)));
  input_error = new_exception(module, "InputError", py::make_tuple(error, py::handle(PyExc_ValueError)));
  out_of_memory = new_exception(module, "OutOfMemoryError", py::make_tuple(error, py::handle(PyExc_RuntimeError)));
  // pybind11's translator type is void(*)(std::exception_ptr): the parameter is by value.
  py::register_exception_translator([](std::exception_ptr thrown) { // NOLINT(performance-unnecessary-value-param)
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const InputError& e) {
      PyErr_SetString(input_error.ptr(), cli::error_message(e).c_str());
    } catch (const OutOfMemoryError& e) {
      PyErr_SetString(out_of_memory.ptr(), cli::error_message(e).c_str());
    }
  });
}

} // namespace twocs::python
