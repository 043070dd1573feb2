// `twocs validate`: the validation file's format and errors, and the repository's validation
// runs against published measurements: absolute acceptance bars, and pins of today's signed
// errors so that no row moves unnoticed (docs/validation.md records the numbers they come from).
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_capture.hpp"
#include "cli/validation_runs.hpp"

namespace {

using twocs::test::contains;
using twocs::test::run_command_line;
using twocs::test::source_file;
using twocs::test::TempDir;

/// `twocs validate` of the repository's runs.yaml, restricted to `only`, as JSON.
nlohmann::json validate(const std::vector<std::string>& only, const std::string& fold,
                        const std::vector<std::string>& overrides = {}) {
  return twocs::test::validate_suite("runs.yaml", only, fold, overrides);
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

TEST_CASE("a layer row measured only as forward plus backward compares one row with the two passes' sum") {
  TempDir dir("validate-layer-sum");
  const auto rows = [&](const std::string& measured) {
    const std::string suite = small_suite(dir, measured + "\n    kind: layer");
    const auto r = run_command_line({"validate", suite, "--json", dir.file("v.json")});
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(twocs::test::read_text(dir.file("v.json")))["runs"];
  };
  const auto passes = rows("{forward: 2ms, backward: 3ms}");
  REQUIRE(passes.size() == 2);
  const auto sum = rows("{forward_backward: 5ms}");
  REQUIRE(sum.size() == 1);
  CHECK(sum[0]["name"] == "tiny forward+backward");
  CHECK(sum[0]["kind"] == "layer");
  CHECK(sum[0]["measured_s"] == doctest::Approx(0.005));
  const double predicted = passes[0]["predicted_s"].get<double>() + passes[1]["predicted_s"].get<double>();
  CHECK(sum[0]["predicted_s"] == doctest::Approx(predicted).epsilon(1e-12));
  CHECK(sum[0]["error"] == doctest::Approx(predicted / 0.005 - 1).epsilon(1e-9));
}

TEST_CASE("a layer row gives forward and backward, or forward_backward alone, and positive") {
  TempDir dir("validate-layer-sum-bad");
  const auto mixed =
      run_command_line({"validate", small_suite(dir, "{forward: 2ms, forward_backward: 5ms}\n    kind: layer")});
  CHECK(mixed.code == 2);
  CHECK(contains(mixed.err, "suite.yaml:6:"));
  CHECK(contains(mixed.err, "give forward and backward, or forward_backward alone"));
  const auto zero = run_command_line({"validate", small_suite(dir, "{forward_backward: 0ms}\n    kind: layer")});
  CHECK(zero.code == 2);
  CHECK(contains(zero.err, "layer times must be positive"));
  const auto missing = run_command_line({"validate", small_suite(dir, "{forward: 2ms}\n    kind: layer")});
  CHECK(missing.code == 2);
  CHECK(contains(missing.err, "backward"));
}

TEST_CASE("a bad entry of a run's set: list is reported at its line and column in the validation file") {
  TempDir dir("validate-set");
  const std::string suite = small_suite(dir, "{iteration_time: 1s}");
  const std::string text = twocs::test::read_text(suite);
  // Line 7: "    set: [training.recompute=full, model.layres=4]", 'layres' at column 42.
  const auto plain = run_command_line(
      {"validate", dir.write("plain.yaml", text + "    set: [training.recompute=full, model.layres=4]\n")});
  CHECK(plain.code == 2);
  CHECK(contains(plain.err, "plain.yaml:7:42: error: unknown key 'layres' in model"));
  CHECK_FALSE(contains(plain.err, "--set"));
  // A quoted entry: at its first character. A value the key refuses: there too.
  const auto quoted =
      run_command_line({"validate", dir.write("quoted.yaml", text + "    set:\n      - \"model.layers=four\"\n")});
  CHECK(quoted.code == 2);
  CHECK(contains(quoted.err, "quoted.yaml:8:9: error: model.layers must be a whole number"));
  // The command line's own --set stays named as such.
  const auto flag = run_command_line({"validate", suite, "--set", "model.layres=4"});
  CHECK(flag.code == 2);
  CHECK(contains(flag.err, "--set model.layres=4:1:7: error: unknown key 'layres' in model"));
}

TEST_CASE("a run that does not fit in memory is reported in the table, then exits 3 unless --ignore-memory") {
  TempDir dir("validate-oom");
  const std::string suite = small_suite(dir, "{iteration_time: 1s}");
  std::string text = twocs::test::read_text(suite);
  text += "    set: [device.memory=512MiB]\n";
  (void)dir.write("suite.yaml", text);
  const auto r = run_command_line({"validate", suite});
  CHECK(r.code == 3);
  CHECK(contains(r.out, "does not fit"));
  CHECK(contains(r.err, "tiny"));
  CHECK(run_command_line({"validate", suite, "--ignore-memory"}).code == 0);
}

namespace {

/// The acceptance bars of the fidelity issue (docs/validation.md, "Acceptance bars and pins"),
/// not today's errors: every row's signed error within +-10%, the mean |error| within 5%.
constexpr double row_bar = 0.10;
constexpr double mean_bar = 0.05;

/// Today's signed errors as shipped (2026-12-03, speed-variation seed 1; scripts/validation-band.py
/// gives the other seeds): a regression pin, not accuracy. A change that moves a row by more than
/// half a point, either way, updates this table and docs/validation.md on purpose.
const std::map<std::string, double> pinned = {{"megatron-sc21-t1-1.7b", -0.0920},
                                              {"megatron-sc21-t1-3.6b", -0.0784},
                                              {"megatron-sc21-t1-7.5b", -0.0547},
                                              {"megatron-sc21-t1-18.4b", -0.0406},
                                              {"megatron-sc21-t1-39.1b", 0.0047},
                                              {"megatron-sc21-t1-76.1b", -0.0626},
                                              {"megatron-sc21-t1-145.6b", -0.0028},
                                              {"megatron-sc21-t1-310.1b", -0.0035},
                                              {"bloom-176b-production", -0.0782},
                                              {"korthikanti-t4-22b-no-recompute forward", 0.0033},
                                              {"korthikanti-t4-22b-no-recompute backward", -0.0047},
                                              {"korthikanti-t4-22b-sequence-parallel forward", -0.0096},
                                              {"korthikanti-t4-22b-sequence-parallel backward", -0.0251},
                                              {"korthikanti-t4-22b-full-recompute forward", 0.0033},
                                              {"korthikanti-t4-22b-full-recompute backward", 0.0035},
                                              {"korthikanti-t4-22b-selective-recompute forward", 0.0033},
                                              {"korthikanti-t4-22b-selective-recompute backward", -0.0182},
                                              {"korthikanti-t4-22b-selective-and-sequence-parallel forward", -0.0096},
                                              {"korthikanti-t4-22b-selective-and-sequence-parallel backward", -0.0366}};
constexpr double pin_margin = 0.005;

/// Every row within the bars, and within half a point of its pinned signed error.
void check_bars_and_pins(const nlohmann::json& result, const char* kind) {
  twocs::test::print_rows(result);
  for (const auto& row : result["runs"]) {
    const std::string name = row["name"].get<std::string>();
    INFO(name);
    CHECK(row["fits"].get<bool>()); // it ran, so it must fit
    const double error = row["error"].get<double>();
    CHECK(std::fabs(error) <= row_bar);
    REQUIRE(pinned.count(name) == 1);
    CHECK(std::fabs(error - pinned.at(name)) <= pin_margin);
  }
  REQUIRE(result[kind]["rows"].get<int>() > 0);
  CHECK(result[kind]["mean_abs_error"].get<double>() <= mean_bar);
}

const std::vector<std::string> korthikanti_rows = {
    "korthikanti-t4-22b-no-recompute", "korthikanti-t4-22b-sequence-parallel", "korthikanti-t4-22b-full-recompute",
    "korthikanti-t4-22b-selective-recompute", "korthikanti-t4-22b-selective-and-sequence-parallel"};

} // namespace

TEST_CASE("Korthikanti et al. Table 4 layer times meet the acceptance bars and their pins (validation suite)") {
  check_bars_and_pins(validate(korthikanti_rows, "auto"), "layer");
}

// About 60 s on two cores (the three smallest run unfolded). The 529.6B and 1T runs (13 s and 20 s,
// 0.8 and 2 GB) are left to `twocs validate`; docs/validation.md records their errors.
TEST_CASE(
    "the SC'21 Table 1 runs to 310.1B and BLOOM-176B meet the acceptance bars and their pins (validation suite)") {
  check_bars_and_pins(validate({"megatron-sc21-t1-1.7b", "megatron-sc21-t1-3.6b", "megatron-sc21-t1-7.5b",
                                "megatron-sc21-t1-18.4b", "megatron-sc21-t1-39.1b", "megatron-sc21-t1-76.1b",
                                "megatron-sc21-t1-145.6b", "megatron-sc21-t1-310.1b", "bloom-176b-production"},
                               "auto"),
                      "iteration");
}

// With speed variation a folded run gives every device the slowest draw of the cluster and a full run
// gives each its own: on the 3.6B run (64 devices, overlapped bucketed all-reduce) they differ by
// 0.35%, on the 1.7B run by 1.0%, which `--fold auto` therefore does not fold (under 2 M tasks).
TEST_CASE("folding replicas moves a validation run by less than 1% (SC'21 3.6B, 2 x 32 devices)") {
  const auto folded = validate({"megatron-sc21-t1-3.6b"}, "on")["runs"][0];
  const auto full = validate({"megatron-sc21-t1-3.6b"}, "off")["runs"][0];
  CHECK(folded["folded"].get<bool>());
  CHECK_FALSE(full["folded"].get<bool>());
  // Its data-parallel all-reduces (32 ranks, 4 per node) run NCCL's tree, which a folded run lowers
  // whole over the group (docs/network.md, "Folding"): folding saves about 4x here (3.9x since
  // validate lowers as twocs run does, whose coarse rings shrink the full run too), 10x with rings.
  CHECK(full["tasks"].get<double>() > 3.5 * folded["tasks"].get<double>());
  CHECK(std::fabs(folded["predicted_s"].get<double>() / full["predicted_s"].get<double>() - 1.0) < 0.01);
}

TEST_CASE("compute-communication interference can only slow a run, and 0 turns it off") {
  // The layer backward overlaps the tensor-parallel all-reduce with the weight-gradient GEMM
  // (Megatron-LM's asynchronous all-reduce, which the 2022 code of Table 4 had); rows 0 and 1
  // are the forward and the backward.
  const auto with = validate({"korthikanti-t4-22b-no-recompute"}, "on")["runs"];
  const auto without =
      validate({"korthikanti-t4-22b-no-recompute"}, "on", {"device.comm_interference.compute_slowdown=0"})["runs"];
  CHECK(with[1]["predicted_s"].get<double>() > without[1]["predicted_s"].get<double>());
}
