// How one scenario of a sweep ended, from its child process's exit: the CSV's `status`.
#pragma once

#include <string>
#include <string_view>

namespace twocs::sweep {

enum class Status { ok, oom, infeasible, error, timeout };

[[nodiscard]] std::string_view to_string(Status status);

/// How a child ended: its exit code, or the signal that killed it (0: none), and whether the
/// sweep killed it for running past its time limit.
struct ChildExit {
  int exit_code = 0;
  int signal = 0;
  bool timed_out = false;
};

/// Exit 0 -> ok, 3 -> oom, 2 -> infeasible (the study's keys were checked up front, so a bad
/// input here is a combination the model rejects), killed for time -> timeout, anything else
/// (1, a crash) -> error. The exit codes are the contract's (docs/outputs.md).
[[nodiscard]] Status classify(const ChildExit& exit);

/// SIGINT, SIGTERM or SIGHUP: a signal that a person or the system sends to stop a process,
/// never a scenario's own failure. A scenario's process killed by one from outside the sweep
/// gets no row; a rerun runs it (the sweep's own Ctrl-C stops the sweep as well).
[[nodiscard]] bool is_stop_signal(int signal);

/// "SIGTERM", or "signal N" for a number without a name.
[[nodiscard]] std::string signal_name(int signal);

/// The `reason` column: the first non-empty line of the child's stderr, or what killed it.
[[nodiscard]] std::string reason_for(const ChildExit& exit, std::string_view stderr_text, double time_limit_s);

} // namespace twocs::sweep
