// Private: one sweep at a time per results CSV. A lock file beside the CSV ("CSV.lock", holding
// the owner's process id) is locked with flock(2) for the sweep's life: a second sweep on the
// same CSV is refused at once, and a sweep killed with SIGKILL releases it with its process.
#pragma once

#include <filesystem>

namespace twocs::sweep::detail {

class ResultsLock {
public:
  /// Locks `csv`; throws InputError when another sweep holds it (naming its process) or when
  /// the lock file cannot be created (the CSV's folder is missing or read-only).
  explicit ResultsLock(const std::filesystem::path& csv);
  /// Removes the lock file, then releases the lock.
  ~ResultsLock();
  ResultsLock(const ResultsLock&) = delete;
  ResultsLock& operator=(const ResultsLock&) = delete;

  /// "CSV.lock".
  [[nodiscard]] static std::filesystem::path lock_path(const std::filesystem::path& csv);

private:
  std::filesystem::path path_;
  int fd_ = -1;
};

} // namespace twocs::sweep::detail
