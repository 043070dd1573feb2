#include "child_process.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stop_signals.hpp"

namespace twocs::sweep::detail {
namespace {

/// In the child, between fork and exec: only async-signal-safe calls. With `in_child`, the
/// child goes on to run the scenario in the forked copy of the sweep's process, which holds
/// only the forking thread: the caller must not fork while another of its threads holds a lock
/// the scenario needs (the Python module sweeps from one thread, twocs.sweep).
[[noreturn]] void become_child(char* const* argv, const char* stderr_path, pid_t parent, const InChild& in_child,
                               const std::vector<std::string>& arguments) {
  default_stop_signals();           // the sweep's handlers go; a stop signal sent meanwhile is held until
  unblock_stop_signals();           // here, then kills the child (never lost in a copy of the sweep's flag)
  prctl(PR_SET_PDEATHSIG, SIGKILL); // a sweep killed with -9 takes its scenarios with it
  if (getppid() != parent) _exit(127);
  const int err = open(stderr_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (err < 0 || null < 0) _exit(scratch_unavailable_exit);
  dup2(null, STDIN_FILENO);
  dup2(null, STDOUT_FILENO);
  dup2(err, STDERR_FILENO);
  if (in_child) _exit(in_child(arguments));
  execv(argv[0], argv);
  static const char message[] = "twocs sweep: cannot start the scenario's process\n";
  (void)!write(STDERR_FILENO, message, sizeof message - 1);
  _exit(127);
}

} // namespace

pid_t spawn(const std::vector<std::string>& argv, const std::filesystem::path& stderr_file, const InChild& in_child) {
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::string err_path = stderr_file.string();
  const pid_t parent = getpid();
  const sigset_t previous = block_stop_signals(); // until the child has dropped the sweep's handlers
  const pid_t pid = fork();
  if (pid != 0) restore_signal_mask(previous);
  if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) become_child(args.data(), err_path.c_str(), parent, in_child, argv);
  return pid;
}

Reaped reap_any() {
  int status = 0;
  const pid_t pid = waitpid(-1, &status, WNOHANG);
  if (pid <= 0) return {};
  Reaped r{pid, {}};
  if (WIFEXITED(status)) r.exit.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.exit.signal = WTERMSIG(status);
  return r;
}

void kill_child(pid_t pid) { ::kill(pid, SIGKILL); }

} // namespace twocs::sweep::detail
