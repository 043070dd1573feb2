// One test per class of bad input: the message, the fix and the exact file:line:column.
#include <doctest/doctest.h>

#include <filesystem>

#include <twocs/config/scenario_loader.hpp>

#include "config/input_error_capture.hpp"

using namespace twocs;
using test::platform_error;
using test::where;
using test::workload_error;

namespace {

/// `text` with its one occurrence of `from` replaced by `to`.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

std::string workload_with(const std::string& from, const std::string& to) {
  return replaced(test::small_workload, from, to);
}

std::string platform_with(const std::string& from, const std::string& to) {
  return replaced(test::small_platform, from, to);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

} // namespace

TEST_CASE("unknown key: names it and suggests the closest known key") {
  const auto e = workload_error(workload_with("hidden: 512", "hiden: 512"));
  CHECK(where(e) == "w.yaml:3:3");
  CHECK(e.problem() == "unknown key 'hiden' in model");
  CHECK(e.fix() == "did you mean 'hidden'?");
  CHECK(e.key_path() == "model");
  CHECK(e.message() == "w.yaml:3:3: error: unknown key 'hiden' in model\n  fix: did you mean 'hidden'?");

  const auto far = platform_error(platform_with("name: tiny", "colour: blue"));
  CHECK(where(far) == "p.yaml:1:1");
  CHECK(far.problem() == "unknown key 'colour' at the top level of the platform");
  CHECK(far.fix() == "the keys here are: name, device, node, cluster, whatif, provenance");
}

TEST_CASE("missing required key: located at the mapping that lacks it") {
  const auto e = workload_error(workload_with("    data: 2\n", ""));
  CHECK(where(e) == "w.yaml:10:3");
  CHECK(e.problem() == "training.parallelism is missing the required key 'data'");
  CHECK(e.fix() == "add 'data: 16'");

  const auto top = workload_error("model: {layers: 4, hidden: 512, heads: 8, vocab: 1000, seq_len: 128}\n");
  CHECK(where(top) == "w.yaml:1:1");
  CHECK(contains(top.problem(), "the workload is missing the required key 'training'"));
}

TEST_CASE("wrong type: a string, a quoted number, a mapping or a non-boolean where a value is expected") {
  const auto text = workload_error(workload_with("heads: 8", "heads: eight"));
  CHECK(where(text) == "w.yaml:4:10");
  CHECK(text.problem() == "model.heads must be a whole number, got 'eight'");

  const auto quoted = workload_error(workload_with("heads: 8", "heads: \"8\""));
  CHECK(where(quoted) == "w.yaml:4:10");
  CHECK(quoted.problem() == "model.heads must be a whole number, got the string '8'");
  CHECK(quoted.fix() == "write 8 without quotes");

  const auto mapping = workload_error(workload_with("seq_len: 128", "seq_len: {tokens: 128}"));
  CHECK(where(mapping) == "w.yaml:6:12");
  CHECK(mapping.problem() == "model.seq_len must be a whole number, got a mapping");

  const auto scalar_for_mapping = workload_error(replaced(
      workload_with("    tensor: 2\n    pipeline: 2\n    data: 2\n", ""), "  parallelism:\n", "  parallelism: 8\n"));
  CHECK(where(scalar_for_mapping) == "w.yaml:10:16");
  CHECK(scalar_for_mapping.problem() == "training.parallelism must be a mapping of keys, got the number 8");

  const auto boolean = workload_error(workload_with("    data: 2\n", "    data: 2\n    sequence: yes\n"));
  CHECK(where(boolean) == "w.yaml:14:15");
  CHECK(boolean.problem() == "training.parallelism.sequence must be true or false, got 'yes'");
  CHECK(boolean.fix() == "write true or false");

  const auto empty = workload_error(workload_with("heads: 8", "heads:"));
  CHECK(where(empty) == "w.yaml:4:3");
  CHECK(empty.problem() == "model.heads has no value");
}

TEST_CASE("a float for a count is rejected with the whole numbers around it") {
  const auto e = workload_error(workload_with("micro_batch: 1", "micro_batch: 1.5"));
  CHECK(where(e) == "w.yaml:9:16");
  CHECK(e.problem() == "training.micro_batch must be a whole number, got the number 1.5");
  CHECK(e.fix() == "counts are whole numbers: write 1 or 2");
}

TEST_CASE("the fix for a float count suggests only whole numbers the key accepts") {
  // 1e30 has no whole neighbours below 2^63; 4.0 is one number; 0.5 is rounded up to a count.
  const auto huge = workload_error(workload_with("layers: 4", "layers: 1e30"));
  CHECK(huge.problem() == "model.layers must be a whole number, got the number 1e30");
  CHECK(huge.fix() == "counts are whole numbers of at most 9223372036854775807: check the value");
  CHECK(workload_error(workload_with("layers: 4", "layers: 4.0")).fix() == "counts are whole numbers: write 4");
  CHECK(workload_error(workload_with("layers: 4", "layers: 0.5")).fix() == "counts are whole numbers: write 1");
  CHECK(workload_error(workload_with("layers: 4", "layers: -2.5")).fix() == "counts are whole numbers: write 1");
  // A count that may be 0 is offered 0.
  const auto shared = workload_error(test::small_workload,
                                     {"model.moe={experts: 8, top_k: 2, expert_ffn_hidden: 256, shared_experts: 0.5}"});
  CHECK(shared.fix() == "counts are whole numbers: write 0 or 1");
}

TEST_CASE("a bare number for a dimensioned key names the key and shows the unit") {
  const auto memory = platform_error(platform_with("memory: 16GiB", "memory: 16"));
  CHECK(where(memory) == "p.yaml:5:11");
  CHECK(memory.problem() == "device.memory needs a unit, e.g. '80GiB'");

  const auto bandwidth = platform_error(platform_with("{bandwidth: 10GB/s", "{bandwidth: 10"));
  CHECK(where(bandwidth) == "p.yaml:12:24");
  CHECK(bandwidth.problem() == "cluster.network.bandwidth needs a unit, e.g. '25GB/s'");

  const auto bucket = workload_error(test::small_workload + "  overlap: {bucket_size: 25000000}\n");
  CHECK(bucket.problem() == "training.overlap.bucket_size needs a unit, e.g. '25MB'");
}

TEST_CASE("a bad unit points at the unit's first character, inside quotes too") {
  const auto plain = platform_error(platform_with("memory_bandwidth: 1TB/s", "memory_bandwidth: 1TX/s"));
  CHECK(where(plain) == "p.yaml:6:22");
  CHECK(contains(plain.problem(), "device.memory_bandwidth: unknown bandwidth unit 'TX/s'"));
  CHECK(plain.fix() == "write e.g. '2039GB/s'");

  const auto quoted = platform_error(platform_with("memory_bandwidth: 1TB/s", "memory_bandwidth: \"1 TX/s\""));
  CHECK(where(quoted) == "p.yaml:6:24");

  const auto rate = platform_error(platform_with("bf16: 100TFLOP/s", "bf16: 100TFLOPs"));
  CHECK(where(rate) == "p.yaml:4:25");
  CHECK(contains(rate.problem(), "device.peak_flops.bf16: unknown compute rate unit 'TFLOPs'"));
}

TEST_CASE("a non-positive size or rate, or a negative duration, is rejected") {
  const auto size = platform_error(platform_with("memory: 16GiB", "memory: 0GiB"));
  CHECK(where(size) == "p.yaml:5:11");
  CHECK(size.problem() == "device.memory must be a positive size, got '0GiB'");

  const auto latency = platform_error(platform_with("latency: 1us", "latency: -1us"));
  CHECK(where(latency) == "p.yaml:9:47");
  CHECK(latency.problem() == "node.interconnect.latency must not be negative, got '-1us'");
}

TEST_CASE("a non-positive count is rejected") {
  const auto e = workload_error(workload_with("layers: 4", "layers: 0"));
  CHECK(where(e) == "w.yaml:2:11");
  CHECK(e.problem() == "model.layers must be positive, got 0");
  CHECK(e.fix() == "give a count of at least 1");

  const auto devices = platform_error(platform_with("devices: 4", "devices: -4"));
  CHECK(where(devices) == "p.yaml:8:12");
  CHECK(devices.problem() == "node.devices must be positive, got -4");

  const auto huge = workload_error(workload_with("layers: 4", "layers: 99999999999999999999"));
  CHECK(huge.problem() == "model.layers = 99999999999999999999 is too large");
}

TEST_CASE("an unknown enumeration value lists the allowed values") {
  const auto e = workload_error(workload_with("micro_batch: 1\n", "micro_batch: 1\n  dtype: bf32\n"));
  CHECK(where(e) == "w.yaml:10:10");
  CHECK(e.problem() == "training.dtype cannot be 'bf32'; allowed values: bf16, fp16, fp32, fp8");
  CHECK(e.fix() == "did you mean 'bf16'?");

  const auto topology = platform_error(platform_with("{bandwidth: 10GB/s", "{topology: hypercube, bandwidth: 10GB/s"));
  CHECK(where(topology) == "p.yaml:12:23");
  CHECK(topology.problem() == "cluster.network.topology cannot be 'hypercube'; allowed values: fat-tree, switch, "
                              "rail-fat-tree, torus, dragonfly");

  const auto dtype_key = platform_error(platform_with("fp32: 10TFLOP/s", "tf32: 10TFLOP/s"));
  CHECK(where(dtype_key) == "p.yaml:4:34");
  CHECK(dtype_key.problem() == "unknown dtype 'tf32' in device.peak_flops; allowed: bf16, fp16, fp32, fp8");
}

TEST_CASE("heads not divisible by tensor: located at the tensor degree") {
  const auto e = workload_error(workload_with("tensor: 2", "tensor: 3"));
  CHECK(where(e) == "w.yaml:11:13");
  CHECK(e.problem() == "model.heads (8) must be divisible by training.parallelism.tensor (3)");
  CHECK(e.key_path() == "training.parallelism.tensor");
  CHECK(contains(e.fix(), "e.g. 2 or 4"));
}

TEST_CASE("global batch not divisible by data x micro_batch: suggests the nearest valid batch") {
  const auto e = workload_error(workload_with("global_batch: 8", "global_batch: 9"));
  CHECK(where(e) == "w.yaml:8:17");
  CHECK(e.problem() == "training.global_batch (9) must be divisible by data x micro_batch (2 x 1 = 2)");
  CHECK(e.fix() == "use global_batch 8 or 10, or change data or micro_batch");
}

TEST_CASE("a defaulted key at fault is located at its nearest parent") {
  // training.dtype is left to its default bf16, which this platform lists no peak for.
  const auto e = test::input_error_of([] {
    (void)config::load_scenario({"w.yaml", test::small_workload},
                                {"p.yaml", platform_with("{bf16: 100TFLOP/s, fp32: 10TFLOP/s}", "{fp32: 10TFLOP/s}")});
  });
  CHECK(e.key_path() == "training.dtype");
  CHECK(where(e) == "w.yaml:7:1");
  CHECK(e.problem() == "device T1 lists no peak for training.dtype bf16");
}

TEST_CASE("a plan larger than the cluster: located at training.parallelism of the workload") {
  const auto e = test::input_error_of([] {
    (void)config::load_scenario({"w.yaml", workload_with("data: 2", "data: 4")}, {"p.yaml", test::small_platform});
  });
  CHECK(where(e) == "w.yaml:10:3");
  CHECK(contains(e.problem(), "the plan needs 16 devices (tensor 2 x pipeline 2 x data 4) but the cluster has 8"));
  CHECK(e.fix() == "lower a parallel degree or add nodes, e.g. --set cluster.nodes=4");

  const auto dtype = test::input_error_of([] {
    (void)config::load_scenario({"w.yaml", workload_with("micro_batch: 1\n", "micro_batch: 1\n  dtype: fp8\n")},
                                {"p.yaml", test::small_platform});
  });
  CHECK(where(dtype) == "w.yaml:10:10");
  CHECK(dtype.key_path() == "training.dtype");
}

TEST_CASE("a plan larger than the cluster shows every degree of its device count") {
  // Context parallelism multiplies the devices; the expert degree shares the stage's ranks.
  const auto e = test::input_error_of([] {
    (void)config::load_scenario({"w.yaml", test::small_workload}, {"p.yaml", test::small_platform},
                                {"training.parallelism.context=4", "training.attention=fused"});
  });
  CHECK(contains(e.problem(), "the plan needs 32 devices (tensor 2 x context 4 x pipeline 2 x data 2) but the "
                              "cluster has 8"));
  model::Parallelism p;
  p.tensor = 2;
  p.data = 4;
  p.expert = 8;
  CHECK(model::describe_degrees(p) == "tensor 2 x pipeline 1 x data 4, expert 8 among them");
}

TEST_CASE("a platform inconsistency found by hardware::validate is located in the platform") {
  const auto e = platform_error(test::small_platform, {"device.operator_model.gemm_efficiency=1.5"});
  CHECK(where(e) == "--set device.operator_model.gemm_efficiency=1.5:1:39");
  const auto fp8 = platform_error(test::small_platform, {"device.operator_model.fp8_gemm_efficiency=0"});
  CHECK(where(fp8) == "--set device.operator_model.fp8_gemm_efficiency=0:1:43");
  CHECK(fp8.key_path() == "device.operator_model.fp8_gemm_efficiency");
  const auto file = platform_error(platform_with("network: {", "network: {oversubscription: 0.5, "));
  CHECK(where(file) == "p.yaml:12:31");
  CHECK(file.key_path() == "cluster.network.oversubscription");
}

TEST_CASE("YAML syntax errors carry yaml-cpp's position") {
  const auto e = workload_error("model:\n  layers: 4\n hidden: 512\n");
  CHECK(where(e) == "w.yaml:3:2");
  CHECK(contains(e.problem(), "YAML syntax error"));
  CHECK_FALSE(e.fix().empty());

  const auto bracket = workload_error("model: {layers: 4, hidden: [1, 2\n");
  CHECK(contains(bracket.problem(), "YAML syntax error"));
  CHECK(bracket.location().has_value());
}

TEST_CASE("an empty file, or one of comments only, is rejected") {
  const auto e = workload_error("");
  CHECK(where(e) == "w.yaml:1:1");
  CHECK(e.problem() == "the file is empty (no YAML content)");
  CHECK(contains(e.fix(), "'model:' and 'training:'"));
  CHECK(workload_error("# nothing here\n\n").problem() == "the file is empty (no YAML content)");
}

TEST_CASE("a top level that is not a mapping is rejected") {
  const auto e = workload_error("- model\n- training\n");
  CHECK(where(e) == "w.yaml:1:1");
  CHECK(e.problem() == "the top level must be a mapping of keys, not a list");
  CHECK(workload_error("42\n").problem() == "the top level must be a mapping of keys, not the number 42");
}

TEST_CASE("a duplicate key is rejected at its second occurrence") {
  const auto e = workload_error(workload_with("layers: 4\n", "layers: 4\n  layers: 5\n"));
  CHECK(where(e) == "w.yaml:3:3");
  CHECK(e.problem() == "duplicate key 'layers' (first given at line 2)");
}

TEST_CASE("pathological YAML: recursive aliases, several documents, non-scalar keys") {
  CHECK(contains(workload_error("model: &x [*x]\n").problem(), "nesting is deeper than"));
  const auto documents = workload_error(test::small_workload + "---\nmodel: {}\n");
  CHECK(where(documents) == "w.yaml:15:1");
  CHECK(contains(documents.problem(), "more than one YAML document"));
  CHECK(where(workload_error("? [a, b]\n: 1\n")) == "w.yaml:1:3");
  CHECK(contains(workload_error("a: \"\\g\"\n").problem(), "YAML syntax error"));
  // yaml-cpp 0.7's LoadAll loops forever on a stray leading ',' (jbeder/yaml-cpp#1040).
  const auto comma = workload_error(", section 3): tensor parallelism\n");
  CHECK(where(comma) == "w.yaml:1:1");
  CHECK(comma.problem() == "YAML syntax error: unexpected ','");
  CHECK(where(workload_error(test::small_workload, {"model.layers=,"})) == "--set model.layers=,:1:14");
}

TEST_CASE("a missing file, a directory: InputErrors naming the path") {
  const auto missing = test::input_error_of([] { (void)config::read_input("/nonexistent/workload.yaml"); });
  CHECK(missing.problem() == "cannot read '/nonexistent/workload.yaml': no such file");
  CHECK_FALSE(missing.fix().empty());
  const auto directory = test::input_error_of([] { (void)config::read_input(TWOCS_SOURCE_DIR); });
  CHECK(contains(directory.problem(), "it is a directory"));
  const auto via_sources = test::input_error_of([] {
    (void)config::load_scenario(
        config::ScenarioSources{std::filesystem::path("/nonexistent/w.yaml"), std::nullopt, {}});
  });
  CHECK(contains(via_sources.message(), "/nonexistent/w.yaml"));
}
