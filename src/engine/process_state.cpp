#include "process_state.hpp"

#include <cassert>

namespace twocs::engine::detail {

ProcessState::ProcessState() : terminate_(std::get_terminate()) {
  [[maybe_unused]] int failures = 0;
  failures += sigaction(SIGINT, nullptr, &interrupt_);
  failures += sigaction(SIGSEGV, nullptr, &segfault_);
  failures += sigaction(SIGBUS, nullptr, &bus_error_);
  failures += sigaltstack(nullptr, &alternate_stack_);
  assert(failures == 0); // queries of valid signals cannot fail (POSIX sigaction, sigaltstack)
}

void ProcessState::restore() const {
  [[maybe_unused]] int failures = 0;
  failures += sigaction(SIGINT, &interrupt_, nullptr);
  failures += sigaction(SIGSEGV, &segfault_, nullptr);
  failures += sigaction(SIGBUS, &bus_error_, nullptr);
  if (alternate_stack_.ss_flags & SS_DISABLE) {
    stack_t disable{};
    disable.ss_flags = SS_DISABLE;
    failures += sigaltstack(&disable, nullptr);
  } else {
    failures += sigaltstack(&alternate_stack_, nullptr);
  }
  assert(failures == 0);
  std::set_terminate(terminate_);
}

} // namespace twocs::engine::detail
