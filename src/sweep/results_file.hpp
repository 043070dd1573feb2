// Private: the results CSV on disk. Rows are appended (one write each) as scenarios finish, so
// an interrupted sweep leaves every finished row and at most one torn last line; reopening it
// keeps the finished rows, drops the torn line, and tells which scenarios remain.
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include <twocs/config/study.hpp>

namespace twocs::sweep::detail {

/// What an earlier run left: the finished scenarios, and notes for the user on what was
/// dropped (a torn last line).
struct PreparedResults {
  std::set<std::size_t> done;
  std::vector<std::string> notes;
};

/// Makes `path` hold `header` and the finished rows of an earlier run of the same study
/// (rewritten atomically when anything was dropped). A CSV with other columns or rows of other
/// axis values (another study's), or a line twocs never writes (earlier_results.hpp), is an
/// InputError at its line, and the file is left untouched.
[[nodiscard]] PreparedResults prepare_results(const std::filesystem::path& path, const std::vector<std::string>& header,
                                              const config::Study& study);

class ResultsAppender {
public:
  explicit ResultsAppender(const std::filesystem::path& path);
  ~ResultsAppender();
  ResultsAppender(const ResultsAppender&) = delete;
  ResultsAppender& operator=(const ResultsAppender&) = delete;
  /// Appends one record with a single write(2): it reaches the file even if the sweep is
  /// killed right after. On failure (a full disk: ENOSPC; over the file size limit: EFBIG; a
  /// file system turned read-only: EROFS) the file is cut back to its length before, so that
  /// no part of the record stays, and the error is returned.
  [[nodiscard]] std::error_code append(const std::vector<std::string>& row);

private:
  std::filesystem::path path_;
  int fd_ = -1;
};

/// Rewrites the CSV sorted by scenario index (one row per scenario), atomically. When it cannot
/// (a read-only folder, a full disk), the InputError says the rows are all there, unsorted.
void sort_results(const std::filesystem::path& path);

} // namespace twocs::sweep::detail
