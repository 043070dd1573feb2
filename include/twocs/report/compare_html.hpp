// `twocs report --compare A.json B.json`: two `twocs run --json` summaries side by side on one
// self-contained HTML page (before and after an interconnect upgrade, a faster device, a plan).
#pragma once

#include <string>

namespace twocs::report {

/// One run's summary as `twocs run --json` wrote it: the file's name (the page's label and the
/// place errors point at) and its text.
struct RunSummaryText {
  std::string file_name;
  std::string text;
};

/// The page: what each run is (workload, platform, plan), the headline numbers with B - A and
/// B / A, the time breakdown and exposed communication per kind, a bar of each iteration on one
/// time scale, and memory per stage. Deterministic: the same summaries give the same bytes.
/// Throws InputError located at the file's line and column for text that is not JSON, and at
/// 1:1 for JSON that is not a run summary (no `iteration_time_s`, `breakdown_s`,
/// `exposed_comm_by_kind_s`).
[[nodiscard]] std::string compare_html(const RunSummaryText& a_text, const RunSummaryText& b_text);

} // namespace twocs::report
