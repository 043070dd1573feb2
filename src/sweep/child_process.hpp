// Private: one scenario's child process (fork + exec of the twocs program), its stdout
// discarded and its stderr kept in a file, killed with the sweep if the sweep dies.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <sys/types.h>
#include <vector>

#include <twocs/sweep/status.hpp>

namespace twocs::sweep::detail {

/// The exit code of a child that could not open its stderr file in the sweep's scratch folder.
constexpr int scratch_unavailable_exit = 126;

/// How a child runs its scenario instead of executing argv[0] (SweepOptions::run_in_child).
using InChild = std::function<int(const std::vector<std::string>& argv)>;

/// Starts `argv[0]` with `argv`, or, when `in_child` is set, a forked copy of this process
/// that calls it with `argv` and exits with its result; returns the pid. Throws
/// std::runtime_error when fork fails.
[[nodiscard]] pid_t spawn(const std::vector<std::string>& argv, const std::filesystem::path& stderr_file,
                          const InChild& in_child = {});

/// A finished child, if any (non-blocking): its pid (0: none finished) and how it ended.
struct Reaped {
  pid_t pid = 0;
  ChildExit exit;
};
[[nodiscard]] Reaped reap_any();

/// SIGKILL to `pid`.
void kill_child(pid_t pid);

} // namespace twocs::sweep::detail
