#include "results_lock.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <string>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <twocs/error.hpp>

namespace twocs::sweep::detail {
namespace {

/// The process id the lock file's owner wrote, as text ("" when unreadable).
std::string owner_of(int fd) {
  char text[32] = {};
  const ssize_t got = ::pread(fd, text, sizeof text - 1, 0);
  std::string owner(text, got > 0 ? static_cast<std::size_t>(got) : 0);
  while (!owner.empty() && (owner.back() == '\n' || owner.back() == ' ')) owner.pop_back();
  return owner;
}

[[noreturn]] void in_use(const std::filesystem::path& csv, const std::string& owner) {
  InputError error(fmt::format("'{}' is being written by another twocs sweep{}", csv.string(),
                               owner.empty() ? std::string() : fmt::format(" (process {})", owner)),
                   {},
                   "wait for that sweep to end, or stop it (Ctrl-C, kill) and rerun this command to resume; to run "
                   "both at once, give this one another --output");
  error.set_location({csv.string()});
  throw error;
}

/// Whether `fd` is still the file at `path`: a sweep that ended may have removed it (then
/// locking the removed file would exclude nobody).
bool still_linked(int fd, const std::filesystem::path& path) {
  struct stat open_file {
  }, named{};
  return ::fstat(fd, &open_file) == 0 && ::stat(path.c_str(), &named) == 0 && open_file.st_dev == named.st_dev &&
         open_file.st_ino == named.st_ino;
}

} // namespace

std::filesystem::path ResultsLock::lock_path(const std::filesystem::path& csv) {
  std::filesystem::path lock = csv;
  lock += ".lock";
  return lock;
}

ResultsLock::ResultsLock(const std::filesystem::path& csv) : path_(lock_path(csv)) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0)
      throw InputError(fmt::format("cannot create the lock file '{}' of '{}': {}", path_.string(), csv.string(),
                                   std::strerror(errno)),
                       {}, "the CSV's folder must exist and be writable: create it or make it writable");
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const std::string owner = owner_of(fd_);
      ::close(fd_);
      fd_ = -1;
      in_use(csv, owner);
    }
    if (still_linked(fd_, path_)) break;
    ::close(fd_); // removed by the sweep that held it just before: lock the new file instead
    fd_ = -1;
  }
  if (fd_ < 0) throw std::runtime_error("cannot lock " + path_.string() + ": it keeps being replaced");
  // Best effort: without the owner's id the lock still holds; a second sweep's message lacks it.
  const std::string owner = std::to_string(::getpid()) + "\n";
  (void)!(::ftruncate(fd_, 0) == 0 && ::pwrite(fd_, owner.data(), owner.size(), 0) > 0);
}

ResultsLock::~ResultsLock() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str()); // before unlocking: a waiting sweep then sees it removed and retries
  ::close(fd_);
}

} // namespace twocs::sweep::detail
