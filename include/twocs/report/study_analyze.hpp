// Renderings of `twocs analyze` (projection::Projection): a table for people, JSON, and CSV
// rows with the fields flattened with dots (one row per scenario of a study).
#pragma once

#include <string>
#include <vector>

#include <twocs/projection/closed_form.hpp>

namespace twocs::report {

[[nodiscard]] std::string projection_table(const projection::Projection& p);
[[nodiscard]] std::string projection_json(const projection::Projection& p);
/// Column names and values, in the same order.
[[nodiscard]] std::vector<std::string> projection_columns();
[[nodiscard]] std::vector<std::string> projection_values(const projection::Projection& p);

} // namespace twocs::report
