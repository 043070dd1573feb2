// The results CSV of a study (`twocs sweep`): a header row and one row per scenario, RFC 4180
// quoting, one record per line (fields never hold line breaks). Written by the sweep as each
// scenario finishes, read back to resume it and by `twocs report` to draw it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace twocs::report {

struct ResultsTable {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;

  /// The column's index, or columns.size() when absent.
  [[nodiscard]] std::size_t column(std::string_view name) const;
};

/// One record: fields joined by commas, quoted where they hold a comma or a quote, with line
/// breaks turned into spaces; ends with '\n'.
[[nodiscard]] std::string csv_record(const std::vector<std::string>& fields);

/// Splits one line (without its '\n') into fields; nullopt-like empty vector on a broken quote.
[[nodiscard]] std::vector<std::string> parse_csv_record(std::string_view line, bool& ok);

/// Parses a whole CSV text; the first record is the header. Records whose field count differs
/// from the header's are skipped (`skipped` counts them).
[[nodiscard]] ResultsTable parse_results_csv(std::string_view text, std::size_t* skipped = nullptr);

} // namespace twocs::report
