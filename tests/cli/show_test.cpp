// `twocs show platform FILE`: the resolved device and network, and the operator model's
// predictions for reference kernels.
#include <doctest/doctest.h>

#include "cli/cli_capture.hpp"

using namespace twocs::test;

TEST_CASE("show platform prints the resolved parameters and reference kernel times") {
  const auto r = run_command_line({"show", "platform", source_file("platforms/dgx-a100-80gb.yaml")});
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  CHECK(contains(r.out, "platform dgx-a100-80gb"));
  CHECK(contains(r.out, "device A100-SXM4-80GB"));
  CHECK(contains(r.out, "bf16 312 TFLOP/s"));
  CHECK(contains(r.out, "108 compute units; tiles 256x128x32 (bf16, fp16)"));
  CHECK(contains(r.out, "x0.767 sustained = 230 GB/s"));
  CHECK(contains(r.out, "reference kernels in bf16"));
  CHECK(contains(r.out, "gemm 8192 x 8192 x 8192"));
  CHECK(contains(r.out, "softmax 32 x 2048 x 2048"));
  CHECK(contains(r.out, "ring all-reduce of 256 MiB over the 8 devices of a node"));
}

TEST_CASE("show platform applies --set and defaults to the embedded platform") {
  const auto r = run_command_line({"show", "platform", "--set", "device.operator_model.compute_units=132", "--set",
                                   "node.interconnect.efficiency=1"});
  CHECK(r.code == 0);
  CHECK(contains(r.out, "(<embedded platforms/dgx-a100-80gb.yaml>)"));
  CHECK(contains(r.out, "132 compute units"));
  CHECK(contains(r.out, "x1 sustained = 300 GB/s"));
}

TEST_CASE("show platform: bad input is exit code 2 with a location") {
  const auto r = run_command_line({"show", "platform", "--set", "device.operator_model.gemm_k_half=-3"});
  CHECK(r.code == 2);
  CHECK(contains(r.err, "--set device.operator_model.gemm_k_half=-3:1:35: error:"));
  CHECK(run_command_line({"show"}).code == 2); // `show` needs what to show
  CHECK(run_command_line({"show", "platform", "/nonexistent.yaml"}).code == 2);
}

TEST_CASE("show platform names the routing and the shape of rail, torus and dragonfly networks") {
  auto r = run_command_line({"show", "platform", source_file("platforms/dgx-h100-superpod.yaml")});
  CHECK(r.code == 0);
  CHECK(contains(r.out, "routing ideal, across rails: pxn"));
  r = run_command_line({"show", "platform", "--set", "cluster.network.routing=ecmp", "--set",
                        "cluster.network.ecmp_seed=7", "--set", "cluster.network.hop_latency=500ns"});
  CHECK(r.code == 0);
  CHECK(contains(r.out, "routing ecmp (seed 7)"));
  CHECK(contains(r.out, "500 ns per hop"));
}

TEST_CASE("show platform prints each parameter's provenance class and source, --set as such") {
  const auto r = run_command_line({"show", "platform", source_file("platforms/dgx-h100.yaml"), "--set",
                                   "device.operator_model.kernel_overhead=2us"});
  CHECK(r.code == 0);
  CHECK(contains(r.out, "provenance of each parameter"));
  CHECK(contains(r.out, "device.memory_bandwidth                      measurement  3350GB/s"));
  CHECK(contains(r.out, "device.operator_model.kernel_overhead        --set        2us"));
  CHECK(contains(r.out, "sensitivity: "));
  CHECK(!contains(r.out, "unstated"));
}
