// The platform file's device.operator_model (tiles, waves, efficiency curve, vector path,
// measured table) and the link efficiencies: every key read, defaults kept, every error located.
#include <doctest/doctest.h>

#include <filesystem>

#include <twocs/config/operator_model_fragment.hpp>
#include <twocs/config/scenario_loader.hpp>

#include "config/input_error_capture.hpp"

using namespace twocs;
using test::platform_error;
using test::where;

namespace {

/// The small test platform with `operator_model` (the text after "operator_model:") added to its device.
std::string platform_with_model(const std::string& operator_model) {
  std::string text = test::small_platform;
  const std::string anchor = "  memory_bandwidth: 1TB/s\n";
  const auto at = text.find(anchor);
  REQUIRE(at != std::string::npos);
  return text.insert(at + anchor.size(), "  operator_model:" + operator_model);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const std::string full_model = R"(
    gemm_efficiency: 0.75
    fp8_gemm_efficiency: 0.7
    memory_efficiency: 0.85
    kernel_overhead: 5us
    compute_units: 108
    gemm_tiles: [{m: 256, n: 128, k: 32}, {m: 128, n: 128, k: 32, efficiency: 0.9}]
    gemm_k_half: 64
    matrix_dtypes: [bf16]
    vector_tiles: [{m: 128, n: 128, k: 8}]
    vector_gemm_efficiency: 0.95
    vector_flops: 10TFLOP/s
    measured:
      - {op: gemm, shape: "m=4096,n=4096,k=4096", dtype: bf16, time: 0.6ms, name: square}
      - {op: batched_gemm, shape: "m=2048,n=2048,k=128,batch=32", dtype: bf16, time: 210us}
      - {op: normalization, shape: "bytes=201326592,flops=402653184", dtype: fp32, time: 130us}
      - {op: flash_backward, shape: "heads=32,seq=8192,head_dim=128,causal=1", dtype: bf16, time: 4.6ms}
)";

} // namespace

TEST_CASE("every operator_model key is read") {
  const auto c = config::parse_platform({"p.yaml", platform_with_model(full_model)});
  const auto& r = c.device.roofline;
  const auto& k = c.device.kernels;
  CHECK(r.gemm_efficiency == 0.75);
  CHECK(r.fp8_gemm_efficiency == 0.7);
  CHECK(r.gemm_efficiency_for(model::Dtype::fp8) == 0.7);
  CHECK(r.gemm_efficiency_for(model::Dtype::bf16) == 0.75);
  CHECK(r.memory_efficiency == 0.85);
  CHECK(r.kernel_overhead.value() == doctest::Approx(5e-6));
  CHECK(k.compute_units == 108);
  REQUIRE(k.gemm_tiles.size() == 2);
  CHECK(k.gemm_tiles[0] == hardware::GemmTile{256, 128, 32, 1.0});
  CHECK(k.gemm_tiles[1] == hardware::GemmTile{128, 128, 32, 0.9});
  CHECK(k.gemm_k_half == 64);
  CHECK(k.matrix_dtypes == std::vector{model::Dtype::bf16});
  CHECK(k.is_matrix_dtype(model::Dtype::bf16));
  CHECK_FALSE(k.is_matrix_dtype(model::Dtype::fp32));
  CHECK(k.vector_tiles.size() == 1);
  CHECK(*k.vector_gemm_efficiency == 0.95);
  CHECK(k.vector_flops->value() == doctest::Approx(10e12));
  REQUIRE(k.measured.size() == 4);
  CHECK(k.measured[0].name == "square");
  CHECK(k.measured[0].kind == model::OpKind::gemm);
  CHECK(k.measured[0].gemm->k == 4096);
  CHECK(k.measured[0].time.value() == doctest::Approx(6e-4));
  CHECK(k.measured[1].gemm->batch == 32);
  CHECK(k.measured[2].kind == model::OpKind::normalization);
  CHECK(k.measured[2].dtype == model::Dtype::fp32);
  CHECK(k.measured[2].bytes.value() == 201326592.0);
  CHECK(k.measured[2].flops.value() == 402653184.0);
  CHECK(k.measured[3].kind == model::OpKind::flash_backward);
  REQUIRE(k.measured[3].attention.has_value());
  CHECK(*k.measured[3].attention == model::AttentionShape{32, 8192, 8192, 128, true});
}

TEST_CASE("without operator_model the kernel model's keys keep their roofline defaults") {
  const auto c = config::parse_platform({"p.yaml", test::small_platform});
  CHECK(c.device.kernels.compute_units == 0);
  CHECK(c.device.kernels.gemm_tiles.empty());
  CHECK(c.device.kernels.gemm_k_half == 0);
  CHECK(c.device.kernels.measured.empty());
  CHECK(c.node.interconnect.efficiency == 1.0);
  CHECK(c.network.link.efficiency == 1.0);
}

TEST_CASE("operator_model errors name the key and its place") {
  const auto unknown = platform_error(platform_with_model(" {gemm_k_halve: 64}\n"));
  CHECK(where(unknown) == "p.yaml:7:20");
  CHECK(unknown.fix() == "did you mean 'gemm_k_half'?");

  const auto tile = platform_error(platform_with_model(" {gemm_tiles: [{m: 256, n: 128}]}\n"));
  CHECK(where(tile) == "p.yaml:7:33");
  CHECK(contains(tile.problem(), "device.operator_model.gemm_tiles[0] is missing the required key 'k'"));

  const auto fraction =
      platform_error(platform_with_model(" {gemm_tiles: [{m: 256, n: 128, k: 32, efficiency: 1.5}]}\n"));
  CHECK(where(fraction) == "p.yaml:7:69");
  CHECK(contains(fraction.problem(), "must lie in (0, 1]"));

  const auto half = platform_error(platform_with_model(" {gemm_k_half: -1}\n"));
  CHECK(where(half) == "p.yaml:7:33");
  CHECK(contains(half.problem(), "must not be negative"));

  const auto dtype = platform_error(platform_with_model(" {matrix_dtypes: [bf16, bf32]}\n"));
  CHECK(where(dtype) == "p.yaml:7:42");
  CHECK(dtype.fix() == "did you mean 'bf16'?");

  const auto units = platform_error(platform_with_model(" {vector_flops: 19.5}\n"));
  CHECK(where(units) == "p.yaml:7:34");
  CHECK(contains(units.problem(), "needs a unit"));

  const auto count = platform_error(platform_with_model(" {compute_units: 0}\n"));
  CHECK(where(count) == "p.yaml:7:35");
}

TEST_CASE("measured rows are checked like profile rows, located inside their shape") {
  const auto op = platform_error(
      platform_with_model("\n    measured: [{op: gem, shape: \"m=1,n=1,k=1\", dtype: bf16, time: 1us}]\n"));
  CHECK(where(op) == "p.yaml:8:21");
  CHECK(op.fix() == "did you mean 'gemm'?");

  const auto shape = platform_error(
      platform_with_model("\n    measured: [{op: gemm, shape: \"m=1,n=x,k=1\", dtype: bf16, time: 1us}]\n"));
  CHECK(where(shape) == "p.yaml:8:41");
  CHECK(contains(shape.problem(), "n must be a positive whole number"));

  const auto key = platform_error(
      platform_with_model("\n    measured: [{op: softmax, shape: \"bytes=100,m=4\", dtype: bf16, time: 1us}]\n"));
  CHECK(where(key) == "p.yaml:8:48");
  CHECK(contains(key.problem(), "unknown dimension 'm'"));

  const auto time = platform_error(
      platform_with_model("\n    measured: [{op: gemm, shape: \"m=1,n=1,k=1\", dtype: bf16, time: 0us}]\n"));
  CHECK(where(time) == "p.yaml:8:68");

  const auto peak = platform_error(
      platform_with_model("\n    measured: [{op: gemm, shape: \"m=1,n=1,k=1\", dtype: fp8, time: 1us}]\n"));
  CHECK(peak.key_path() == "device.operator_model.measured");
  CHECK(contains(peak.problem(), "lists no fp8"));
}

TEST_CASE("a fused attention row's shape is checked and located") {
  const auto flag = platform_error(platform_with_model(
      "\n    measured: [{op: flash_forward, shape: \"heads=1,seq=8,head_dim=8,causal=2\", dtype: bf16, time: 1us}]\n"));
  CHECK(where(flag) == "p.yaml:8:76");
  CHECK(contains(flag.problem(), "causal must be 0 or 1"));
  CHECK(flag.fix() == "write causal=1 (a causal mask) or causal=0 (none)");

  const auto missing = platform_error(platform_with_model(
      "\n    measured: [{op: flash_backward, shape: \"heads=1,seq=8,causal=0\", dtype: bf16, time: 1us}]\n"));
  CHECK(contains(missing.problem(), "the shape is missing 'head_dim'"));

  const auto gemm_key =
      platform_error(platform_with_model("\n    measured: [{op: flash_forward, shape: "
                                         "\"m=1,heads=1,seq=8,head_dim=8,causal=0\", dtype: bf16, time: 1us}]\n"));
  CHECK(contains(gemm_key.problem(), "unknown dimension 'm'"));

  const auto zero = platform_error(platform_with_model(
      "\n    measured: [{op: flash_forward, shape: \"heads=0,seq=8,head_dim=8,causal=0\", dtype: bf16, time: 1us}]\n"));
  CHECK(contains(zero.problem(), "heads must be a positive whole number"));
}

TEST_CASE("link efficiencies are read, checked and located") {
  const std::string text = R"(device: {peak_flops: {bf16: 100TFLOP/s}, memory: 16GiB, memory_bandwidth: 1TB/s}
node: {devices: 4, interconnect: {bandwidth: 100GB/s, latency: 1us, efficiency: 0.8}}
cluster: {nodes: 2, network: {bandwidth: 10GB/s, latency: 5us, efficiency: 0.9}}
)";
  const auto c = config::parse_platform({"p.yaml", text});
  CHECK(c.node.interconnect.efficiency == 0.8);
  CHECK(c.network.link.efficiency == 0.9);
  const auto e = platform_error(text, {"node.interconnect.efficiency=1.2"});
  CHECK(where(e) == "--set node.interconnect.efficiency=1.2:1:30");
  CHECK(e.key_path() == "node.interconnect.efficiency");
  const auto network = platform_error(text, {"cluster.network.efficiency=0"});
  CHECK(network.key_path() == "cluster.network.efficiency");
}

TEST_CASE("--set reaches every operator_model key") {
  const auto c =
      config::parse_platform({"p.yaml", platform_with_model(full_model)},
                             {"device.operator_model.gemm_k_half=32", "device.operator_model.compute_units=132",
                              "device.operator_model.gemm_tiles=[{m: 128, n: 256, k: 64}]"});
  CHECK(c.device.kernels.gemm_k_half == 32);
  CHECK(c.device.kernels.compute_units == 132);
  CHECK(c.device.kernels.gemm_tiles == std::vector{hardware::GemmTile{128, 256, 64, 1.0}});
  CHECK(c.device.roofline.gemm_efficiency == 0.75); // the rest of the file stays
}

TEST_CASE("a written fragment reads back as the same parameters") {
  auto original = config::parse_platform({"p.yaml", platform_with_model(full_model)}).device;
  // An FP8 GEMM row with its accumulation and scaling (platform_with_model has no FP8 peak).
  hardware::KernelMeasurement fp8 = original.kernels.measured.front();
  fp8.dtype = model::Dtype::fp8;
  fp8.accumulation = hardware::Fp8Accumulation::split;
  fp8.scaling = hardware::Fp8Scaling::blockwise;
  original.kernels.measured.push_back(fp8);
  config::FragmentOptions options;
  options.comments = {"a comment"};
  options.device_name = "fitted \"A\"";
  options.with_measurements = true;
  const std::string fragment = config::operator_model_fragment(original, options);
  CHECK(fragment.rfind("# a comment\ndevice:\n  name: \"fitted \\\"A\\\"\"\n  operator_model:\n", 0) == 0);
  // The fragment's device section, completed with the keys it does not carry.
  const std::string text = fragment +
                           "  peak_flops: {bf16: 100TFLOP/s, fp32: 10TFLOP/s, fp8: 200TFLOP/s}\n  memory: 16GiB\n"
                           "  memory_bandwidth: 1TB/s\nnode: {devices: 1, interconnect: {bandwidth: "
                           "1GB/s, latency: 1us}}\ncluster: {nodes: 1, network: {bandwidth: 1GB/s, "
                           "latency: 1us}}\n";
  const auto back = config::parse_platform({"fragment.yaml", text}).device;
  CHECK(back.name == "fitted \"A\"");
  CHECK(back.roofline.gemm_efficiency == original.roofline.gemm_efficiency);
  CHECK(back.roofline.fp8_gemm_efficiency == original.roofline.fp8_gemm_efficiency);
  CHECK(back.roofline.kernel_overhead.value() == doctest::Approx(original.roofline.kernel_overhead.value()));
  CHECK(back.kernels.gemm_tiles == original.kernels.gemm_tiles);
  CHECK(back.kernels.vector_tiles == original.kernels.vector_tiles);
  CHECK(back.kernels.matrix_dtypes == original.kernels.matrix_dtypes);
  CHECK(back.kernels.gemm_k_half == original.kernels.gemm_k_half);
  CHECK(back.kernels.vector_flops->value() == doctest::Approx(original.kernels.vector_flops->value()));
  REQUIRE(back.kernels.measured.size() == original.kernels.measured.size());
  for (std::size_t i = 0; i < back.kernels.measured.size(); ++i) {
    CHECK(back.kernels.measured[i].name == original.kernels.measured[i].name);
    CHECK(back.kernels.measured[i].gemm.has_value() == original.kernels.measured[i].gemm.has_value());
    CHECK(back.kernels.measured[i].attention == original.kernels.measured[i].attention);
    CHECK(back.kernels.measured[i].bytes.value() == original.kernels.measured[i].bytes.value());
    CHECK(back.kernels.measured[i].time.value() == doctest::Approx(original.kernels.measured[i].time.value()));
    CHECK(back.kernels.measured[i].accumulation == original.kernels.measured[i].accumulation);
    CHECK(back.kernels.measured[i].scaling == original.kernels.measured[i].scaling);
    CHECK(back.kernels.measured[i].dtype == original.kernels.measured[i].dtype);
  }
}
