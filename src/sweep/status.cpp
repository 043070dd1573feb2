#include <twocs/sweep/status.hpp>

#include <csignal>
#include <cstring>

#include <fmt/format.h>

namespace twocs::sweep {

std::string_view to_string(Status status) {
  switch (status) {
  case Status::ok: return "ok";
  case Status::oom: return "oom";
  case Status::infeasible: return "infeasible";
  case Status::error: return "error";
  case Status::timeout: return "timeout";
  }
  return "error";
}

Status classify(const ChildExit& exit) {
  if (exit.timed_out) return Status::timeout;
  if (exit.signal != 0) return Status::error;
  switch (exit.exit_code) {
  case 0: return Status::ok;
  case 2: return Status::infeasible;
  case 3: return Status::oom;
  default: return Status::error;
  }
}

bool is_stop_signal(int signal) { return signal == SIGINT || signal == SIGTERM || signal == SIGHUP; }

std::string signal_name(int signal) {
  const char* name = sigabbrev_np(signal);
  return name ? fmt::format("SIG{}", name) : fmt::format("signal {}", signal);
}

std::string reason_for(const ChildExit& exit, std::string_view stderr_text, double time_limit_s) {
  if (exit.timed_out) return fmt::format("killed after the time limit of {} s (--timeout)", time_limit_s);
  std::string_view first;
  while (!stderr_text.empty()) {
    const std::size_t end = stderr_text.find('\n');
    std::string_view line = stderr_text.substr(0, end);
    stderr_text = end == std::string_view::npos ? std::string_view() : stderr_text.substr(end + 1);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (!line.empty()) {
      first = line;
      break;
    }
  }
  if (exit.signal != 0)
    return fmt::format("killed by signal {} ({}){}{}", exit.signal, strsignal(exit.signal), first.empty() ? "" : ": ",
                       first);
  if (exit.exit_code == 0) return "";
  if (first.empty()) return fmt::format("exit code {} with no message", exit.exit_code);
  constexpr std::string_view prefix = "twocs: ";
  if (first.substr(0, prefix.size()) == prefix) first.remove_prefix(prefix.size());
  return std::string(first);
}

} // namespace twocs::sweep
