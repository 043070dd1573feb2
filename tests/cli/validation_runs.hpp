// Runs `twocs validate` on one of the repository's validation files and checks the results
// against ceilings: shared by the validation tests of runs.yaml and modern.yaml.
#pragma once

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_capture.hpp"

namespace twocs::test {

/// `twocs validate` of the repository's file `suite` (under workloads/validation/), restricted
/// to the runs named in `only` (all when empty), as JSON.
inline nlohmann::json validate_suite(const std::string& suite, const std::vector<std::string>& only,
                                     const std::string& fold, const std::vector<std::string>& overrides = {},
                                     const std::vector<std::string>& flags = {}) {
  TempDir dir("validate-repo");
  std::vector<std::string> args{
      "validate", source_file("workloads/validation/" + suite), "-q", "--fold", fold, "--json", dir.file("v.json")};
  for (const auto& name : only) args.insert(args.end(), {"--run", name});
  for (const auto& o : overrides) args.insert(args.end(), {"--set", o});
  args.insert(args.end(), flags.begin(), flags.end());
  const auto r = run_command_line(args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  return nlohmann::json::parse(read_text(dir.file("v.json")));
}

/// Prints every row, so that a failing check shows the numbers.
inline void print_rows(const nlohmann::json& result) {
  for (const auto& row : result["runs"])
    MESSAGE(row["name"].get<std::string>()
            << ": measured " << row["measured_s"].get<double>() << " s, predicted " << row["predicted_s"].get<double>()
            << " s (" << 100 * row["error"].get<double>() << "%)");
}

/// Checks that `result` has exactly the rows of `pins` and each row's signed error is within
/// `margin` of its pin.
inline void check_pinned_errors(const nlohmann::json& result, const std::map<std::string, double>& pins,
                                double margin) {
  print_rows(result);
  REQUIRE(result["runs"].size() == pins.size());
  for (const auto& row : result["runs"]) {
    const std::string name = row["name"].get<std::string>();
    INFO(name);
    REQUIRE(pins.count(name) == 1);
    CHECK(std::fabs(row["error"].get<double>() - pins.at(name)) <= margin);
  }
}

} // namespace twocs::test
