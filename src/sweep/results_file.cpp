#include "results_file.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <sstream>
#include <unistd.h>

#include <fmt/format.h>

#include <twocs/error.hpp>
#include <twocs/fileio/output_file.hpp>
#include <twocs/report/results_csv.hpp>

namespace twocs::sweep::detail {
namespace {

std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<std::size_t> index_of(const std::string& field) {
  std::size_t index = 0;
  auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), index);
  if (ec != std::errc() || ptr != field.data() + field.size() || field.empty()) return std::nullopt;
  return index;
}

std::string table_text(const std::vector<std::string>& header,
                       const std::map<std::size_t, std::vector<std::string>>& rows) {
  std::string text = report::csv_record(header);
  for (const auto& [index, row] : rows) text += report::csv_record(row);
  return text;
}

[[noreturn]] void foreign_csv(const std::filesystem::path& path, const std::string& why) {
  InputError error(fmt::format("'{}' holds results of another study: {}", path.string(), why), {},
                   "remove it to start afresh, or write elsewhere with --output");
  error.set_location({path.string()});
  throw error;
}

} // namespace

std::set<std::size_t> prepare_results(const std::filesystem::path& path, const std::vector<std::string>& header,
                                      const config::Study& study) {
  std::string text = std::filesystem::exists(path) ? read_all(path) : std::string();
  const bool torn = !text.empty() && text.back() != '\n';
  if (torn) text.erase(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1); // kill -9 mid-write
  std::size_t skipped = 0;
  const report::ResultsTable table = report::parse_results_csv(text, &skipped);
  if (!table.columns.empty() && table.columns != header)
    foreign_csv(path, "its columns differ (or a twocs version with other columns wrote it)");
  std::map<std::size_t, std::vector<std::string>> rows;
  const std::size_t axes = study.axis_keys().size();
  for (const auto& row : table.rows) {
    const auto index = index_of(row.front());
    if (!index || *index >= study.scenario_count()) foreign_csv(path, fmt::format("scenario '{}'", row.front()));
    const std::vector<std::string> values = study.scenario_values(*index);
    if (!std::equal(values.begin(), values.end(), row.begin() + 1, row.begin() + 1 + static_cast<long>(axes)))
      foreign_csv(path, fmt::format("scenario {} has other axis values", *index));
    if (!rows.contains(*index)) rows.emplace(*index, row); // a duplicate (never written by twocs): keep the first
  }
  const std::string clean = table_text(header, rows);
  if (clean != text || torn || skipped > 0 || table.columns.empty()) fileio::write_file_atomically(path, clean);
  std::set<std::size_t> done;
  for (const auto& entry : rows) done.insert(entry.first);
  return done;
}

ResultsAppender::ResultsAppender(const std::filesystem::path& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd_ < 0)
    throw InputError(fmt::format("cannot append to '{}': {}", path.string(), std::strerror(errno)), {},
                     "check that the folder is writable");
}

ResultsAppender::~ResultsAppender() {
  if (fd_ >= 0) ::close(fd_);
}

void ResultsAppender::append(const std::vector<std::string>& row) {
  const std::string record = report::csv_record(row);
  const ssize_t written = ::write(fd_, record.data(), record.size());
  if (written != static_cast<ssize_t>(record.size()))
    throw InputError(fmt::format("cannot append to '{}': {}", path_.string(), std::strerror(errno)), {},
                     "check the free space of the disk");
}

void sort_results(const std::filesystem::path& path) {
  const report::ResultsTable table = report::parse_results_csv(read_all(path));
  std::map<std::size_t, std::vector<std::string>> rows;
  for (const auto& row : table.rows)
    if (const auto index = index_of(row.front())) rows.emplace(*index, row);
  fileio::write_file_atomically(path, table_text(table.columns, rows));
}

} // namespace twocs::sweep::detail
