#include <twocs/sweep/sweep.hpp>

#include <cerrno>
#include <charconv>
#include <csignal>
#include <string>
#include <string_view>
#include <system_error>

namespace twocs::sweep {
namespace {

constexpr std::string_view work_dir_prefix = "twocs-sweep-";

/// The process id a scratch folder's name carries, or -1 when the name is not one of ours.
long pid_of(std::string_view name) {
  if (!name.starts_with(work_dir_prefix)) return -1;
  const std::string_view digits = name.substr(work_dir_prefix.size());
  long pid = -1;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
  if (error != std::errc{} || end != digits.data() + digits.size() || pid <= 0) return -1;
  return pid;
}

/// kill(pid, 0) fails with ESRCH only when no such process exists (POSIX); EPERM means it lives.
bool process_gone(long pid) { return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }

} // namespace

std::filesystem::path work_dir_of(const std::filesystem::path& parent, long pid) {
  return parent / (std::string(work_dir_prefix) + std::to_string(pid));
}

std::size_t remove_stale_work_dirs(const std::filesystem::path& parent) {
  std::size_t removed = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(parent, error)) {
    const long pid = pid_of(entry.path().filename().string());
    if (pid <= 0 || !entry.is_directory(error) || !process_gone(pid)) continue;
    if (std::filesystem::remove_all(entry.path(), error) != static_cast<std::uintmax_t>(-1) && !error) ++removed;
  }
  return removed;
}

} // namespace twocs::sweep
