// device.operator_model.measured_profiles: profile CSVs (scripts/profile_operators.py) named by
// a platform file, each path relative to that file, their rows added to the measured table;
// a missing file is an error at the key, a bad row an error at its place in the CSV.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

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

TEST_CASE("training.fp8_recipe keeps the FP8 GEMM rows of its scaling, else the per-tensor rows stand in") {
  const std::string rows = "    measured:\n"
                           "      - {op: gemm, shape: \"m=64,n=64,k=64\", dtype: fp8, time: 2us}\n"
                           "      - {op: gemm, shape: \"m=64,n=64,k=64\", dtype: fp8, time: 3us, scaling: blockwise}\n"
                           "      - {op: gemm, shape: \"m=64,n=64,k=64\", dtype: bf16, time: 4us}\n";
  const auto times = [&](const std::string& platform, const std::string& recipe) {
    std::vector<long> us;
    const auto s = config::load_scenario({"w.yaml", test::small_workload}, {"p.yaml", platform},
                                         {"training.dtype=fp8", "training.fp8_recipe=" + recipe});
    for (const auto& r : s.cluster.device.kernels.measured) us.push_back(std::lround(r.time.value() * 1e6));
    return us;
  };
  const std::string both = platform_naming("[]", rows);
  CHECK(times(both, "delayed") == std::vector<long>{2, 4});
  CHECK(times(both, "tensorwise") == std::vector<long>{2, 4});
  CHECK(times(both, "blockwise") == std::vector<long>{3, 4});
  // No blockwise row: the per-tensor rows price the blockwise recipe.
  const std::string tensor_only =
      platform_naming("[]", "    measured:\n      - {op: gemm, shape: \"m=64,n=64,k=64\", dtype: fp8, time: 2us}\n");
  CHECK(times(tensor_only, "blockwise") == std::vector<long>{2});
  // The recipe only with FP8; a scaling only on FP8 GEMM rows, in the CSV too.
  const auto bf16 = test::workload_error(test::small_workload, {"training.fp8_recipe=blockwise"});
  CHECK(bf16.key_path() == "training.fp8_recipe");
  const auto word = test::workload_error(test::small_workload, {"training.dtype=fp8", "training.fp8_recipe=block"});
  CHECK(word.problem().find("blockwise") != std::string::npos);
  const auto row = test::platform_error(platform_naming(
      "[]",
      "    measured:\n      - {op: softmax, shape: \"bytes=1024\", dtype: bf16, time: 2us, scaling: blockwise}\n"));
  CHECK(row.problem().find("not an FP8 GEMM") != std::string::npos);
  const ScratchDir dir("twocs-measured-profiles-scaling");
  (void)dir.write("platforms/s.csv", "op,shape,dtype,measured_time,scaling\ngemm,\"m=16,n=16,k=16\",fp8,1us,blockwise\n"
                                     "gemm,\"m=16,n=16,k=16\",fp8,1us,rowwise\n");
  const auto csv = test::input_error_of([&] {
    (void)config::parse_platform(config::read_input(dir.write("platforms/p.yaml", platform_naming("[s.csv]"))));
  });
  CHECK(where(csv) == (dir.path / "platforms/s.csv").string() + ":3:31");
  CHECK(csv.problem().find("allowed: tensorwise, blockwise") != std::string::npos);
}

TEST_CASE("measured_device_scale: this device against the one its measured rows were timed on") {
  const auto scaled = config::parse_platform(
      {"p.yaml", platform_naming("[]", "    measured_device_scale: {compute: 0.922, memory_bandwidth: 0.716}\n")});
  CHECK(scaled.device.kernels.measured_compute_scale == doctest::Approx(0.922));
  CHECK(scaled.device.kernels.measured_memory_scale == doctest::Approx(0.716));
  const auto partial =
      config::parse_platform({"p.yaml", platform_naming("[]", "    measured_device_scale: {compute: 2}\n")});
  CHECK(partial.device.kernels.measured_memory_scale == 1);
  // A what-if multiplies onto the platform's own scale.
  const auto both = config::load_scenario(
      {"w.yaml", test::small_workload},
      {"p.yaml", platform_naming("[]", "    measured_device_scale: {compute: 0.5}\n")}, {"whatif.compute_scale=3"});
  CHECK(both.cluster.device.kernels.measured_compute_scale == doctest::Approx(1.5));
  const auto zero = test::platform_error(platform_naming("[]", "    measured_device_scale: {compute: 0}\n"));
  CHECK(where(zero) == "p.yaml:9:38");
  const auto key = test::platform_error(platform_naming("[]", "    measured_device_scale: {flops: 2}\n"));
  CHECK(key.fix().find("compute") != std::string::npos);
}
