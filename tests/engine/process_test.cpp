// Simulating leaves the process as it found it: SimGrid 3.32 installs SIGINT, SIGSEGV and SIGBUS
// handlers and a terminate handler when an engine is created; the engine layer puts the
// caller's back (a Ctrl-C must not make SimGrid print and exit(1)).
#include <doctest/doctest.h>

#include <csignal>
#include <exception>

#include "engine_test_support.hpp"

using namespace twocs;
using namespace twocs::engine::test;
using namespace twocs::units::literals;

namespace {
void own_interrupt_handler(int) {}
void own_terminate_handler() { std::abort(); }

using Handler = void (*)(int);
Handler handler_of(int signal) {
  struct sigaction action {};
  sigaction(signal, nullptr, &action);
  return action.sa_handler;
}
} // namespace

TEST_CASE("a simulation keeps the caller's signal and terminate handlers") {
  struct sigaction mine {};
  mine.sa_handler = own_interrupt_handler;
  struct sigaction previous {};
  REQUIRE(sigaction(SIGINT, &mine, &previous) == 0);
  const Handler segfault = handler_of(SIGSEGV);
  const Handler bus_error = handler_of(SIGBUS);
  const std::terminate_handler previous_terminate = std::set_terminate(own_terminate_handler);

  lowering::TaskGraph graph(2);
  add_transfer(graph, 0, 1, 1_MB);
  (void)engine::simulate(graph, make_topology({}));

  // Compared outside the assertion: doctest cannot print function pointers.
  const bool interrupt_kept = handler_of(SIGINT) == &own_interrupt_handler;
  const bool segfault_kept = handler_of(SIGSEGV) == segfault;
  const bool bus_error_kept = handler_of(SIGBUS) == bus_error;
  const bool terminate_kept = std::get_terminate() == &own_terminate_handler;
  CHECK(interrupt_kept);
  CHECK(segfault_kept);
  CHECK(bus_error_kept);
  CHECK(terminate_kept);
  std::set_terminate(previous_terminate);
  sigaction(SIGINT, &previous, nullptr);
}
