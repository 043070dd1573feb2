// Private: the results CSV of an earlier run of a study, read back line by line before a
// resume. Rows twocs wrote are kept; a torn last line (a sweep killed while writing it, a full
// disk) is dropped so that its scenario runs again; anything else twocs never writes (a row
// with another field count, an unknown status, a scenario twice, another study's rows) is an
// error naming the line and what to do, and the file is left as it is.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <twocs/config/study.hpp>

namespace twocs::sweep::detail {

struct EarlierResults {
  std::map<std::size_t, std::vector<std::string>> rows; // by scenario index
  std::vector<std::string> notes;                       // "CSV:LINE: note: ..." for what was dropped
};

/// Reads `text`, the content of `path`, against the study's `header`; throws InputError
/// located at the offending line.
[[nodiscard]] EarlierResults read_earlier_results(const std::filesystem::path& path, std::string_view text,
                                                  const std::vector<std::string>& header, const config::Study& study);

} // namespace twocs::sweep::detail
