// The human summary that `twocs run` prints.
#pragma once

#include <string>

#include <twocs/analysis/summary.hpp>

namespace twocs::report {

[[nodiscard]] std::string summary_table(const analysis::Summary& summary);

} // namespace twocs::report
