// The "only with" rules of docs/errors.md, driven from the docs' own table: each row's settings,
// applied with --set to its base workload, must be refused naming the row's key, with the row's
// message, at a location. A row the code no longer refuses, or whose message or key changed,
// fails here; a new rule needs its row added by hand.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <twocs/config/scenario_loader.hpp>

#include "config/input_error_capture.hpp"

using namespace twocs;

namespace {

struct Rule {
  std::string key;
  std::string message;
  std::string base;
  std::vector<std::string> settings;
};

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The code spans of a Markdown table cell: "`a=1` `b=2`" -> {"a=1", "b=2"}.
std::vector<std::string> code_spans(const std::string& cell) {
  std::vector<std::string> out;
  for (std::size_t open = cell.find('`'); open != std::string::npos; open = cell.find('`', open)) {
    const std::size_t close = cell.find('`', open + 1);
    if (close == std::string::npos) break;
    out.push_back(cell.substr(open + 1, close - open - 1));
    open = close + 1;
  }
  return out;
}

/// The cells of a Markdown table row, as written.
std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream row(line.substr(1));
  for (std::string cell; std::getline(row, cell, '|');) out.push_back(cell);
  return out;
}

/// A cell's one code span.
std::string code(const std::string& cell) {
  const std::vector<std::string> spans = code_spans(cell);
  REQUIRE(spans.size() == 1);
  return spans.front();
}

/// The rows of the table under "## Only with ...": key | only with | message | base | settings,
/// every cell but the second one or more code spans.
std::vector<Rule> documented_rules() {
  std::stringstream doc(read_text(std::string(TWOCS_SOURCE_DIR) + "/docs/errors.md"));
  std::vector<Rule> rules;
  bool inside = false;
  for (std::string line; std::getline(doc, line);) {
    if (line.starts_with("## ")) inside = line.starts_with("## Only with");
    if (!inside || !line.starts_with("| `")) continue;
    const std::vector<std::string> c = cells(line);
    REQUIRE(c.size() == 5);
    rules.push_back({code(c[0]), code(c[2]), code(c[3]), code_spans(c[4])});
  }
  return rules;
}

} // namespace

TEST_CASE("only-with rules: every row of docs/errors.md is refused as the table says") {
  const std::vector<Rule> rules = documented_rules();
  CHECK(rules.size() >= 20);
  const config::InputText platform = config::embedded_default_platform();
  for (const Rule& rule : rules) {
    CAPTURE(rule.key);
    CAPTURE(rule.message);
    const std::string path = std::string(TWOCS_SOURCE_DIR) + "/tests/corpus/workload/" + rule.base + ".yaml";
    const config::InputText workload{path, read_text(path)};
    REQUIRE_FALSE(workload.text.empty());
    const InputError e = test::input_error_of([&] { (void)config::load_scenario(workload, platform, rule.settings); });
    CAPTURE(e.message());
    CHECK(e.key_path() == rule.key);
    CHECK(e.message().find(rule.message) != std::string::npos);
    CHECK_FALSE(test::where(e).empty());
    CHECK_FALSE(e.fix().empty());
  }
}

TEST_CASE("only-with rules: the base workloads are valid without the rows' settings") {
  const config::InputText platform = config::embedded_default_platform();
  for (const char* base : {"moe", "valid"}) {
    const std::string path = std::string(TWOCS_SOURCE_DIR) + "/tests/corpus/workload/" + base + ".yaml";
    CHECK_NOTHROW((void)config::load_scenario({path, read_text(path)}, platform));
  }
}
