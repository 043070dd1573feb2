// `twocs calibrate PROFILE.csv`: fits, prints the errors, writes a fragment that reads back;
// bad profiles are exit code 2 with file:line:column.
#include <doctest/doctest.h>

#include <filesystem>

#include <twocs/config/scenario_loader.hpp>

#include "cli/cli_capture.hpp"

using namespace twocs;
using namespace twocs::test;

namespace {

const std::string sample = (std::filesystem::path(TWOCS_TEST_DATA_DIR) / "sample_profile.csv").string();

} // namespace

TEST_CASE("calibrate fits the sample profile and reports errors per kernel, per op and overall") {
  const auto r = run_command_line({"calibrate", sample});
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  CHECK(contains(r.out, "twocs calibrate: 28 kernels from"));
  CHECK(contains(r.out, "gemm_efficiency"));
  CHECK(contains(r.out, "22b.attn.qkv "));
  CHECK(contains(r.out, "error by op"));
  CHECK(contains(r.out, "batched_gemm"));
  CHECK(contains(r.out, "overall                        28"));
}

TEST_CASE("calibrate writes the fitted parameters as a platform fragment that twocs reads") {
  TempDir dir("calibrate");
  const auto fragment = dir.file("fitted.yaml");
  const auto r = run_command_line({"calibrate", sample, "--platform", source_file("platforms/dgx-a100-80gb.yaml"),
                                   "--device-name", "A100 sample", "--output", fragment});
  REQUIRE(r.code == 0);
  CHECK(contains(r.out, "wrote " + fragment));
  const std::string text = read_text(fragment);
  CHECK(text.rfind("# Operator-model parameters of A100 sample", 0) == 0);
  // The sample was generated with e = 0.78, k_half = 72, m = 0.84, o = 5 us and +-2% noise.
  const std::string platform = text + "  peak_flops: {bf16: 312TFLOP/s, fp16: 312TFLOP/s, fp32: 19.5TFLOP/s}\n"
                                      "  memory: 80GiB\n  memory_bandwidth: 2039GB/s\n"
                                      "node: {devices: 8, interconnect: {bandwidth: 300GB/s, latency: 2us}}\n"
                                      "cluster: {nodes: 1, network: {bandwidth: 25GB/s, latency: 5us}}\n";
  const auto device = config::parse_platform({"fitted.yaml", platform}).device;
  CHECK(device.name == "A100 sample");
  CHECK(device.roofline.gemm_efficiency == doctest::Approx(0.78).epsilon(0.02));
  CHECK(device.kernels.gemm_k_half == doctest::Approx(72).epsilon(0.1));
  CHECK(device.roofline.memory_efficiency == doctest::Approx(0.84).epsilon(0.02));
  CHECK(device.roofline.kernel_overhead.value() == doctest::Approx(5e-6).epsilon(0.1));
  CHECK(device.kernels.compute_units == 108); // kept from the base platform
  CHECK(device.kernels.measured.empty());
}

TEST_CASE("calibrate --with-table writes the measurements, which then take precedence") {
  TempDir dir("calibrate-table");
  const auto fragment = dir.file("table.yaml");
  REQUIRE(run_command_line({"calibrate", sample, "--with-table", "-o", fragment}).code == 0);
  const std::string text = read_text(fragment);
  CHECK(contains(text, "    measured:\n      - {op: gemm, shape: \"m=1024,n=1024,k=1024\", dtype: bf16, time: "));
  CHECK(contains(text, "name: \"adam\"}"));
}

TEST_CASE("a bad profile is exit code 2 with file:line:column and a fix") {
  TempDir dir("calibrate-bad");
  const auto bad = dir.write("bad.csv", "op,shape,dtype,measured_time\ngemm,\"m=1,n=1,k=1\",bf16,12\n");
  const auto r = run_command_line({"calibrate", bad});
  CHECK(r.code == 2);
  CHECK(contains(r.err, bad + ":2:25: error: measured_time needs a unit, got '12'"));
  CHECK(contains(r.err, "fix: write the time with its unit"));
  CHECK(r.out.empty());

  const auto missing = run_command_line({"calibrate", dir.file("none.csv")});
  CHECK(missing.code == 2);
  CHECK(contains(missing.err, "no such file"));

  const auto fp8 = dir.write("fp8.csv", "op,shape,dtype,measured_time\ngemm,\"m=1,n=1,k=1\",fp8,1us\n");
  const auto no_peak = run_command_line({"calibrate", fp8});
  CHECK(no_peak.code == 2);
  CHECK(contains(no_peak.err, "lists no fp8 peak"));

  CHECK(run_command_line({"calibrate"}).code == 2); // the profile is required
  // Nothing is written when the profile is bad.
  CHECK(run_command_line({"calibrate", bad, "-o", dir.file("out.yaml")}).code == 2);
  CHECK_FALSE(std::filesystem::exists(dir.file("out.yaml")));
}
