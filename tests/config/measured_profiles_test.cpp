// device.operator_model.measured_profiles: profile CSVs (scripts/profile_operators.py) named by
// a platform file, each path relative to that file, their rows added to the measured table;
// a missing file is an error at the key, a bad row an error at its place in the CSV.
#include <doctest/doctest.h>

#include <string>

#include <twocs/config/scenario_loader.hpp>

#include "config/input_error_capture.hpp"
#include "support/scratch_dir.hpp"

using namespace twocs;
using test::ScratchDir;
using test::where;

namespace {

/// test::small_platform with an FP8 peak and an operator_model naming `profiles`.
std::string platform_naming(const std::string& profiles, const std::string& inline_rows = "") {
  std::string text = test::small_platform;
  text.replace(text.find("fp32: 10TFLOP/s}"), 16, "fp32: 10TFLOP/s, fp8: 200TFLOP/s}");
  const std::string anchor = "  memory_bandwidth: 1TB/s\n";
  return text.insert(text.find(anchor) + anchor.size(),
                     "  operator_model:\n    measured_profiles: " + profiles + "\n" + inline_rows);
}

const std::string profile = "# a comment line\n"
                            "op,shape,dtype,measured_time,name,accumulation\n"
                            "gemm,\"m=4096,n=4096,k=4096\",bf16,700us,square,\n"
                            "gemm,\"m=4096,n=4096,k=4096\",fp8,400us,square.split_accum,split\n";

} // namespace

TEST_CASE("a platform's measured_profiles are read relative to the platform file") {
  const ScratchDir dir("twocs-measured-profiles");
  (void)dir.write("platforms/gemm.csv", profile);
  const auto file = dir.write("platforms/p.yaml", platform_naming("[gemm.csv, gemm.csv]"));
  const auto cluster = config::parse_platform(config::read_input(file));
  const auto& rows = cluster.device.kernels.measured;
  REQUIRE(rows.size() == 4); // both files' rows, in order
  CHECK(rows[0].dtype == model::Dtype::bf16);
  CHECK(rows[0].time.value() == doctest::Approx(700e-6));
  CHECK(rows[1].accumulation == hardware::Fp8Accumulation::split);
  CHECK(rows[3].name == "square.split_accum");
  // Inline rows come first, then the profiles' rows.
  const auto both =
      dir.write("platforms/q.yaml",
                platform_naming("[gemm.csv]",
                                "    measured:\n      - {op: gemm, shape: \"m=64,n=64,k=64\", dtype: fp8, time: 2us, "
                                "accumulation: fast}\n"));
  const auto combined = config::parse_platform(config::read_input(both)).device.kernels.measured;
  REQUIRE(combined.size() == 3);
  CHECK(combined[0].accumulation == hardware::Fp8Accumulation::fast);
}

TEST_CASE("measured_profiles errors: a missing file at the key, a bad row in the CSV") {
  const ScratchDir dir("twocs-measured-profiles-errors");
  const auto missing = test::input_error_of([&] {
    (void)config::parse_platform(config::read_input(dir.write("platforms/p.yaml", platform_naming("[no.csv]"))));
  });
  CHECK(where(missing) == (dir.path / "platforms/p.yaml").string() + ":8:25");
  CHECK(missing.problem().find("resolved to '" + (dir.path / "platforms/no.csv").string() + "'") != std::string::npos);
  CHECK(missing.fix().find("relative to the platform file") != std::string::npos);
  (void)dir.write("platforms/bad.csv", "op,shape,dtype,measured_time\ngemm,\"m=1,n=1,k=1\",bf16,1\n");
  const auto bad = test::input_error_of([&] {
    (void)config::parse_platform(config::read_input(dir.write("platforms/q.yaml", platform_naming("[bad.csv]"))));
  });
  CHECK(where(bad) == (dir.path / "platforms/bad.csv").string() + ":2:25");
  const auto bf16 = test::platform_error(platform_naming(
      "[]",
      "    measured:\n      - {op: gemm, shape: \"m=64,n=64,k=64\", dtype: bf16, time: 2us, accumulation: fast}\n"));
  CHECK(where(bf16) == "p.yaml:10:83");
  CHECK(bf16.problem().find("not an FP8 GEMM") != std::string::npos);
  const auto word = test::platform_error(platform_naming(
      "[]",
      "    measured:\n      - {op: gemm, shape: \"m=64,n=64,k=64\", dtype: fp8, time: 2us, accumulation: slow}\n"));
  CHECK(where(word) == "p.yaml:10:82");
}
