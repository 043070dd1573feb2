// `twocs validate`: the validation file's format and errors, and the repository's validation
// runs against published measurements, with thresholds that can only be tightened
// (docs/validation.md records the numbers they come from).
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include "cli/cli_capture.hpp"
#include "cli/validate_command.hpp"

namespace {

using twocs::test::contains;
using twocs::test::run_command_line;
using twocs::test::source_file;
using twocs::test::TempDir;

spdlog::logger& quiet_log() {
  static spdlog::logger log("validate-test", std::make_shared<spdlog::sinks::null_sink_mt>());
  return log;
}

std::string suite_path() { return source_file("workloads/validation/runs.yaml"); }

std::vector<twocs::cli::ValidationRow> validate(std::vector<std::string> only, twocs::cli::FoldMode fold,
                                                std::vector<std::string> overrides = {}) {
  twocs::cli::ValidateOptions options;
  options.file = suite_path();
  options.only = std::move(only);
  options.fold = fold;
  options.overrides = std::move(overrides);
  return twocs::cli::run_validation(options, quiet_log());
}

/// A validation file with one small run on the catalogue's A100 platform.
std::string small_suite(const TempDir& dir, const std::string& measured) {
  const std::string workload =
      dir.write("w.yaml", R"(model: {name: tiny, layers: 2, hidden: 1024, heads: 16, vocab: 51200, seq_len: 1024}
training: {global_batch: 8, micro_batch: 2, dtype: bf16, parallelism: {tensor: 2, pipeline: 1, data: 2}}
)");
  return dir.write("suite.yaml", "runs:\n  - name: tiny\n    citation: \"made up\"\n    workload: w.yaml\n"
                                 "    platform: " +
                                     source_file("platforms/dgx-a100-80gb.yaml") + "\n    measured: " + measured +
                                     "\n");
}

} // namespace

TEST_CASE("validate prints every row, the mean absolute error and the max, and writes the same as JSON") {
  TempDir dir("validate-json");
  const std::string suite = small_suite(dir, "{iteration_time: 1s}");
  const auto r = run_command_line({"validate", suite, "--json", dir.file("v.json")});
  REQUIRE(r.code == 0);
  CHECK(contains(r.out, "tiny"));
  CHECK(contains(r.out, "4 (2 x 1 x 2)"));
  CHECK(contains(r.out, "iteration time: mean absolute error"));
  const auto json = nlohmann::json::parse(twocs::test::read_text(dir.file("v.json")));
  REQUIRE(json["runs"].size() == 1);
  const double predicted = json["runs"][0]["predicted_s"];
  CHECK(json["runs"][0]["measured_s"] == doctest::Approx(1.0));
  CHECK(json["runs"][0]["error"] == doctest::Approx(predicted - 1.0));
  CHECK(json["iteration"]["max_abs_error"] == doctest::Approx(std::fabs(predicted - 1.0)));
}

TEST_CASE("a throughput converts to an iteration time with the plan: B s / (tokens/s/GPU x GPUs)") {
  TempDir dir("validate-tokens");
  const auto r = run_command_line(
      {"validate", small_suite(dir, "{tokens_per_second_per_gpu: 1024}"), "--json", dir.file("v.json")});
  REQUIRE(r.code == 0);
  const auto json = nlohmann::json::parse(twocs::test::read_text(dir.file("v.json")));
  CHECK(json["runs"][0]["measured_s"] == doctest::Approx(8.0 * 1024 / (1024.0 * 4)));
}

TEST_CASE("a bad validation file exits 2 naming the file, line and column") {
  TempDir dir("validate-bad");
  const auto r = run_command_line({"validate", small_suite(dir, "{iteration_time: 1s, forward: 2ms}")});
  CHECK(r.code == 2);
  CHECK(contains(r.err, "suite.yaml:6:"));
  CHECK(contains(r.err, "forward"));
  const auto unknown = run_command_line({"validate", small_suite(dir, "{iteration_time: 1s}"), "--run", "nope"});
  CHECK(unknown.code == 2);
  CHECK(contains(unknown.err, "nope"));
}
