// Private: the results CSV on disk. Rows are appended (one write each) as scenarios finish, so
// an interrupted sweep leaves every finished row and at most one torn last line; reopening it
// keeps the finished rows, drops the torn line, and tells which scenarios remain.
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <twocs/config/study.hpp>

namespace twocs::sweep::detail {

/// Makes `path` hold `header` and the valid finished rows of an earlier run of the same study
/// (rewritten atomically when anything was dropped); returns the finished scenario indices.
/// A CSV with other columns, or rows whose axis values differ from the study's, is an
/// InputError: it belongs to another study.
[[nodiscard]] std::set<std::size_t> prepare_results(const std::filesystem::path& path,
                                                    const std::vector<std::string>& header, const config::Study& study);

class ResultsAppender {
public:
  explicit ResultsAppender(const std::filesystem::path& path);
  ~ResultsAppender();
  ResultsAppender(const ResultsAppender&) = delete;
  ResultsAppender& operator=(const ResultsAppender&) = delete;
  /// Appends one record with a single write(2): it reaches the file even if the sweep is
  /// killed right after.
  void append(const std::vector<std::string>& row);

private:
  std::filesystem::path path_;
  int fd_ = -1;
};

/// Rewrites the CSV sorted by scenario index (one row per scenario), atomically.
void sort_results(const std::filesystem::path& path);

} // namespace twocs::sweep::detail
