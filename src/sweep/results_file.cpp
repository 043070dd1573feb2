#include "results_file.hpp"

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

#include "earlier_results.hpp"

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

} // namespace

PreparedResults prepare_results(const std::filesystem::path& path, const std::vector<std::string>& header,
                                const config::Study& study) {
  // The CSV is read back to resume and appended to row by row: a device or a pipe is neither (a
  // read of /dev/full or /dev/zero never ends).
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    throw InputError(fmt::format("the results CSV '{}' is not a regular file: a sweep reads its CSV back to resume "
                                 "and appends each row to it",
                                 path.string()),
                     {}, "give --output the path of a file (it is created if it does not exist)");
  const std::string text = std::filesystem::exists(path) ? read_all(path) : std::string();
  EarlierResults earlier = read_earlier_results(path, text, header, study);
  const std::string clean = table_text(header, earlier.rows);
  if (clean != text) fileio::write_file_atomically(path, clean);
  PreparedResults prepared{{}, std::move(earlier.notes)};
  for (const auto& entry : earlier.rows) prepared.done.insert(entry.first);
  return prepared;
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

std::error_code ResultsAppender::append(const std::vector<std::string>& row) {
  const std::string record = report::csv_record(row);
  const off_t before = ::lseek(fd_, 0, SEEK_END);
  std::size_t written = 0;
  while (written < record.size()) {
    const ssize_t n = ::write(fd_, record.data() + written, record.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : ENOSPC;                        // a write of nothing: no room
      if (written > 0 && before >= 0) (void)!::ftruncate(fd_, before); // else the resume drops the torn line
      return {error, std::generic_category()};
    }
    written += static_cast<std::size_t>(n);
  }
  return {};
}

void sort_results(const std::filesystem::path& path) {
  const report::ResultsTable table = report::parse_results_csv(read_all(path));
  std::map<std::size_t, std::vector<std::string>> rows;
  for (const auto& row : table.rows)
    if (const auto index = index_of(row.front())) rows.emplace(*index, row);
  try {
    fileio::write_file_atomically(path, table_text(table.columns, rows));
  } catch (const InputError& e) {
    InputError error(fmt::format("every scenario's row is in '{}', but it could not be rewritten sorted by "
                                 "scenario ({})",
                                 path.string(), e.problem()),
                     {},
                     "make its folder writable (or free space on its disk) and rerun the same command: nothing runs "
                     "again, the rows are sorted");
    error.set_location({path.string()});
    throw error;
  }
}

} // namespace twocs::sweep::detail
