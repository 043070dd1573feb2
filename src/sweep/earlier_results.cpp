#include "earlier_results.hpp"

#include <algorithm>
#include <charconv>
#include <optional>

#include <fmt/format.h>

#include <twocs/error.hpp>
#include <twocs/report/results_csv.hpp>
#include <twocs/sweep/status.hpp>

namespace twocs::sweep::detail {
namespace {

constexpr std::string_view statuses = "ok, oom, infeasible, error, timeout";

std::optional<std::size_t> index_of(const std::string& field) {
  std::size_t index = 0;
  auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), index);
  if (ec != std::errc() || ptr != field.data() + field.size() || field.empty()) return std::nullopt;
  return index;
}

bool known_status(const std::string& status) {
  for (const Status s : {Status::ok, Status::oom, Status::infeasible, Status::error, Status::timeout})
    if (to_string(s) == status) return true;
  return false;
}

/// Checks one file's lines; each problem is an InputError at its line.
class LineChecker {
public:
  LineChecker(const std::filesystem::path& path, const std::vector<std::string>& header, const config::Study& study)
      : path_(path), header_(header), study_(study) {}

  void check_header(std::size_t line, const std::vector<std::string>& columns, bool parsed) const {
    if (!parsed || columns != header_)
      foreign(line, "its columns differ (or a twocs version with other columns wrote it)");
  }

  /// Adds the row of line `line` to `rows`.
  void check_row(std::size_t line, const std::vector<std::string>& row, bool parsed, EarlierResults& out) const {
    if (!parsed) edited(line, "it has an unclosed quote", std::nullopt);
    const auto index = index_of(row.front());
    if (row.size() != header_.size())
      edited(line, fmt::format("it has {} fields, the header {}", row.size(), header_.size()), index);
    if (!index) edited(line, fmt::format("'{}' is not a scenario index", row.front()), std::nullopt);
    if (*index >= study_.scenario_count())
      foreign(line, fmt::format("scenario {}, while the study has {}", *index, study_.scenario_count()));
    const std::vector<std::string> values = study_.scenario_values(*index);
    if (!std::equal(values.begin(), values.end(), row.begin() + 1))
      foreign(line, fmt::format("scenario {} has other axis values", *index));
    const std::string& status = row[1 + values.size()]; // scenario, the axes, status
    if (!known_status(status)) edited(line, fmt::format("status '{}' is not one of {}", status, statuses), index);
    if (const auto first = lines_.find(*index); first != lines_.end())
      edited(line, fmt::format("scenario {} is here a second time (first at line {})", *index, first->second), index);
    lines_.emplace(*index, line);
    out.rows.emplace(*index, row);
  }

private:
  [[noreturn]] void foreign(std::size_t line, const std::string& why) const {
    fail(line, fmt::format("'{}' holds results of another study: {}", path_.string(), why),
         "remove it to start afresh, or write elsewhere with --output");
  }
  /// A line twocs never writes: changed by hand or by another program.
  [[noreturn]] void edited(std::size_t line, const std::string& why, std::optional<std::size_t> index) const {
    const std::string rerun = index ? fmt::format("scenario {}", *index) : std::string("its scenario");
    fail(line, fmt::format("line {} of '{}' is not a row twocs wrote: {}", line, path_.string(), why),
         fmt::format("correct the line, or delete it so that {} runs again; then rerun the same command", rerun));
  }
  [[noreturn]] void fail(std::size_t line, const std::string& problem, const std::string& fix) const {
    InputError error(problem, {}, fix);
    error.set_location({path_.string(), static_cast<int>(line), 1});
    throw error;
  }

  const std::filesystem::path& path_;
  const std::vector<std::string>& header_;
  const config::Study& study_;
  mutable std::map<std::size_t, std::size_t> lines_; // scenario -> its line
};

} // namespace

EarlierResults read_earlier_results(const std::filesystem::path& path, std::string_view text,
                                    const std::vector<std::string>& header, const config::Study& study) {
  EarlierResults out;
  const LineChecker checker(path, header, study);
  std::size_t line = 0;
  bool header_read = false;
  while (!text.empty()) {
    ++line;
    const std::size_t end = text.find('\n');
    const std::string_view record = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (end == std::string_view::npos) { // the sweep was stopped while writing this line
      out.notes.push_back(fmt::format("{}:{}: note: the last line is incomplete (a sweep stopped while writing it); "
                                      "dropped, its scenario runs again",
                                      path.string(), line));
      break;
    }
    if (record.empty() || record == "\r") continue;
    bool parsed = true;
    const std::vector<std::string> fields = report::parse_csv_record(record, parsed);
    if (header_read) {
      checker.check_row(line, fields, parsed, out);
    } else {
      checker.check_header(line, fields, parsed);
      header_read = true;
    }
  }
  return out;
}

} // namespace twocs::sweep::detail
