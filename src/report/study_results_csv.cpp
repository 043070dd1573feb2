#include <twocs/report/results_csv.hpp>

namespace twocs::report {

std::size_t ResultsTable::column(std::string_view name) const {
  for (std::size_t i = 0; i < columns.size(); ++i)
    if (columns[i] == name) return i;
  return columns.size();
}

std::string csv_record(const std::vector<std::string>& fields) {
  std::string out;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i) out += ',';
    std::string field = fields[i];
    for (char& c : field)
      if (c == '\n' || c == '\r') c = ' ';
    if (field.find_first_of(",\"") == std::string::npos) {
      out += field;
      continue;
    }
    out += '"';
    for (char c : field) {
      if (c == '"') out += '"';
      out += c;
    }
    out += '"';
  }
  return out + '\n';
}

std::vector<std::string> parse_csv_record(std::string_view line, bool& ok) {
  std::vector<std::string> fields(1);
  ok = true;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  ok = !quoted;
  return fields;
}

ResultsTable parse_results_csv(std::string_view text, std::size_t* skipped) {
  ResultsTable table;
  std::size_t bad = 0;
  bool header = true;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (line.empty()) continue;
    bool ok = true;
    std::vector<std::string> fields = parse_csv_record(line, ok);
    if (header) {
      table.columns = std::move(fields);
      header = false;
    } else if (ok && fields.size() == table.columns.size()) {
      table.rows.push_back(std::move(fields));
    } else {
      ++bad;
    }
  }
  if (skipped) *skipped = bad;
  return table;
}

} // namespace twocs::report
