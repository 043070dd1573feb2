// Process-wide settings that creating a SimGrid engine changes behind the caller's back
// (private to the engine layer).
//
// Measured in SimGrid 3.32: constructing an s4u::Engine installs handlers for SIGINT (print the
// simulation status, then exit(1)), SIGSEGV and SIGBUS (detect actor stack overflows, on an
// alternate signal stack), and a std::terminate handler; none is removed when the engine is
// destroyed. twocs runs no actors, and its core must neither print nor exit: a Ctrl-C in a
// sweep must stop the program the way the program decides.
#pragma once

#include <csignal>
#include <exception>

namespace twocs::engine::detail {

/// Saves the handlers SimGrid replaces; restore() puts them back.
class ProcessState {
public:
  ProcessState();
  void restore() const;

private:
  struct sigaction interrupt_ {};
  struct sigaction segfault_ {};
  struct sigaction bus_error_ {};
  stack_t alternate_stack_{};
  std::terminate_handler terminate_ = nullptr;
};

} // namespace twocs::engine::detail
