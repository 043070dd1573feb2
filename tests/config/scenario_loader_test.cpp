// Reading valid scenarios: the catalogue, the contract's examples, defaults, block and flow style.
#include <doctest/doctest.h>

#include <filesystem>
#include <sstream>

#include <twocs/config/scenario_loader.hpp>

#include "config/input_error_capture.hpp"

using namespace twocs;

namespace {

// The contract's examples (docs/spec interface.md, "Workload file" and "Platform file"), verbatim.
const std::string contract_workload = R"(model:
  name: gpt3-175b
  layers: 96
  hidden: 12288
  heads: 96
  kv_heads: 96            # optional; default = heads (fewer = grouped-query attention)
  ffn_hidden: 49152       # optional; default 4 * hidden
  ffn_kind: gelu          # gelu | swiglu
  vocab: 51200
  seq_len: 2048
training:
  global_batch: 1536      # sequences per iteration
  micro_batch: 1          # sequences per micro-batch
  dtype: bf16             # bf16 | fp16 | fp32 | fp8
  parallelism:
    tensor: 8
    pipeline: 8
    data: 16
    sequence: true        # Megatron sequence parallelism (optional, default false)
    virtual_stages: 1     # model chunks per pipeline rank (interleaved schedule)
  pipeline_schedule: 1f1b # gpipe | 1f1b | interleaved-1f1b
  recompute: none         # none | selective | full
  optimizer:
    kind: adam
    sharding: none        # none | optimizer | gradients | full  (ZeRO-1/2/3 style)
  overlap:
    dp_grad_reduce: true  # bucketed data-parallel gradient reduction during backward
    bucket_size: 25MB
)";

const std::string contract_platform = R"(name: dgx-a100-superpod
device:
  name: A100-SXM4-80GB
  peak_flops: {bf16: 312TFLOP/s, fp16: 312TFLOP/s, fp32: 19.5TFLOP/s}
  memory: 80GiB
  memory_bandwidth: 2039GB/s
node:
  devices: 8
  interconnect: {topology: switch, bandwidth: 300GB/s, latency: 1us}  # per device, per direction
cluster:
  nodes: 420
  network: {topology: fat-tree, bandwidth: 25GB/s, latency: 5us, oversubscription: 1}  # per device NIC, per direction
)";

// The contract's workload in JSON (flow style).
const std::string contract_workload_json = R"({"model": {"name": "gpt3-175b", "layers": 96, "hidden": 12288,
  "heads": 96, "kv_heads": 96, "ffn_hidden": 49152, "ffn_kind": "gelu", "vocab": 51200, "seq_len": 2048},
 "training": {"global_batch": 1536, "micro_batch": 1, "dtype": "bf16",
  "parallelism": {"tensor": 8, "pipeline": 8, "data": 16, "sequence": true, "virtual_stages": 1},
  "pipeline_schedule": "1f1b", "recompute": "none", "optimizer": {"kind": "adam", "sharding": "none"},
  "overlap": {"dp_grad_reduce": true, "bucket_size": "25MB"}}})";

const std::string contract_platform_json = R"({"name": "dgx-a100-superpod",
 "device": {"name": "A100-SXM4-80GB", "peak_flops": {"bf16": "312TFLOP/s", "fp16": "312TFLOP/s",
   "fp32": "19.5TFLOP/s"}, "memory": "80GiB", "memory_bandwidth": "2039GB/s"},
 "node": {"devices": 8, "interconnect": {"topology": "switch", "bandwidth": "300GB/s", "latency": "1us"}},
 "cluster": {"nodes": 420, "network": {"topology": "fat-tree", "bandwidth": "25GB/s", "latency": "5us",
   "oversubscription": 1}}})";

/// Every field of a workload, for comparing two readings of the same scenario.
std::string dump(const config::Workload& w) {
  std::ostringstream out;
  const auto& m = w.model;
  const auto& p = w.plan;
  const auto& par = p.parallelism;
  out << m.name << ' ' << m.layers << ' ' << m.hidden << ' ' << m.heads << ' ' << m.kv_heads << ' ' << m.ffn_hidden
      << ' ' << to_string(m.ffn_kind) << ' ' << m.vocab << ' ' << m.seq_len << " | " << p.global_batch << ' '
      << p.micro_batch << ' ' << to_string(p.dtype) << ' ' << par.tensor << ' ' << par.pipeline << ' ' << par.data
      << ' ' << par.sequence << ' ' << par.virtual_stages << ' ' << par.stage_layers.size() << ' '
      << to_string(p.pipeline_schedule) << ' ' << to_string(p.recompute) << ' ' << to_string(p.optimizer.kind) << ' '
      << to_string(p.optimizer.sharding) << ' ' << p.overlap.dp_grad_reduce << ' ' << p.overlap.bucket_size.value()
      << ' ' << p.overlap.tp_async_backward;
  return out.str();
}

std::string dump(const hardware::ClusterSpec& c) {
  std::ostringstream out;
  out << c.name << ' ' << c.device.name << ' ' << c.device.memory.value() << ' ' << c.device.memory_bandwidth.value();
  for (const auto& [dtype, rate] : c.device.peak_flops) out << ' ' << to_string(dtype) << '=' << rate.value();
  out << ' ' << c.device.roofline.gemm_efficiency << ' ' << c.device.roofline.memory_efficiency << ' '
      << c.device.roofline.kernel_overhead.value() << " | " << c.node.devices << ' ' << to_string(c.node.topology)
      << ' ' << c.node.interconnect.bandwidth.value() << ' ' << c.node.interconnect.latency.value() << " | " << c.nodes
      << ' ' << to_string(c.network.topology) << ' ' << c.network.link.bandwidth.value() << ' '
      << c.network.link.latency.value() << ' ' << c.network.oversubscription << ' ' << c.network.nodes_per_switch;
  return out.str();
}

std::vector<std::filesystem::path> yaml_files_in(const char* folder) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(TWOCS_SOURCE_DIR) / folder))
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  return files;
}

} // namespace

TEST_CASE("every platform file in platforms/ loads") {
  const auto files = yaml_files_in("platforms");
  CHECK(files.size() >= 3);
  for (const auto& file : files) {
    CAPTURE(file);
    const auto cluster = config::parse_platform(config::read_input(file));
    CHECK(cluster.device_count() > 0);
    CHECK(cluster.device.peak(model::Dtype::bf16).has_value());
  }
}

TEST_CASE("every workload file in workloads/ loads, and runs on the DGX A100 platform (DGX H100 for FP8)") {
  const auto files = yaml_files_in("workloads");
  CHECK(files.size() >= 2);
  const auto source = std::filesystem::path(TWOCS_SOURCE_DIR);
  const auto a100 = config::read_input(source / "platforms/dgx-a100-80gb.yaml");
  const auto h100 = config::read_input(source / "platforms/dgx-h100.yaml"); // A100s have no FP8
  for (const auto& file : files) {
    CAPTURE(file);
    const auto workload = config::parse_workload(config::read_input(file));
    CHECK(workload.plan.world_size() > 0);
    // Large plans may need more nodes than the catalogue default: grow the cluster as a user would.
    const auto nodes = std::max<std::int64_t>(560, (workload.plan.world_size() + 7) / 8);
    const auto& platform = workload.plan.dtype == model::Dtype::fp8 ? h100 : a100;
    const auto scenario =
        config::load_scenario(config::read_input(file), platform, {"cluster.nodes=" + std::to_string(nodes)});
    CHECK(scenario.workload.model.layers == workload.model.layers);
  }
}

TEST_CASE("the contract's example workload loads with its values") {
  const auto w = config::parse_workload({"workloads/example.yaml", contract_workload});
  CHECK(w.model.name == "gpt3-175b");
  CHECK(w.model.layers == 96);
  CHECK(w.model.hidden == 12288);
  CHECK(w.model.heads == 96);
  CHECK(w.model.kv_heads == 96);
  CHECK(w.model.ffn_hidden == 49152);
  CHECK(w.model.ffn_kind == model::FfnKind::gelu);
  CHECK(w.model.vocab == 51200);
  CHECK(w.model.seq_len == 2048);
  CHECK(w.plan.global_batch == 1536);
  CHECK(w.plan.micro_batch == 1);
  CHECK(w.plan.dtype == model::Dtype::bf16);
  CHECK(w.plan.parallelism.tensor == 8);
  CHECK(w.plan.parallelism.pipeline == 8);
  CHECK(w.plan.parallelism.data == 16);
  CHECK(w.plan.parallelism.sequence);
  CHECK(w.plan.parallelism.virtual_stages == 1);
  CHECK(w.plan.pipeline_schedule == model::PipelineSchedule::one_f_one_b);
  CHECK(w.plan.recompute == model::Recompute::none);
  CHECK(w.plan.optimizer.kind == model::OptimizerKind::adam);
  CHECK(w.plan.optimizer.sharding == model::OptimizerSharding::none);
  CHECK(w.plan.overlap.dp_grad_reduce);
  CHECK(w.plan.overlap.bucket_size.value() == 25e6);
  CHECK(w.plan.world_size() == 1024);
}

TEST_CASE("the contract's example platform loads with its values") {
  const auto c = config::parse_platform({"platforms/example.yaml", contract_platform});
  CHECK(c.name == "dgx-a100-superpod");
  CHECK(c.device.name == "A100-SXM4-80GB");
  CHECK(c.device.peak(model::Dtype::bf16)->value() == doctest::Approx(312e12));
  CHECK(c.device.peak(model::Dtype::fp16)->value() == doctest::Approx(312e12));
  CHECK(c.device.peak(model::Dtype::fp32)->value() == doctest::Approx(19.5e12));
  CHECK_FALSE(c.device.peak(model::Dtype::fp8).has_value());
  CHECK(c.device.memory.value() == 85899345920.0); // 80GiB
  CHECK(c.device.memory_bandwidth.value() == doctest::Approx(2039e9));
  CHECK(c.node.devices == 8);
  CHECK(c.node.topology == hardware::NodeTopology::switch_);
  CHECK(c.node.interconnect.bandwidth.value() == doctest::Approx(300e9));
  CHECK(c.node.interconnect.latency.value() == doctest::Approx(1e-6));
  CHECK(c.nodes == 420);
  CHECK(c.device_count() == 3360);
  CHECK(c.network.topology == hardware::NetworkTopology::fat_tree);
  CHECK(c.network.link.bandwidth.value() == doctest::Approx(25e9));
  CHECK(c.network.link.latency.value() == doctest::Approx(5e-6));
  CHECK(c.network.oversubscription == 1.0);
  CHECK(c.network.nodes_per_switch == 32); // default
  const hardware::RooflineParams defaults;
  CHECK(c.device.roofline.gemm_efficiency == defaults.gemm_efficiency);
  CHECK(c.device.roofline.memory_efficiency == defaults.memory_efficiency);
  CHECK(c.device.roofline.kernel_overhead == defaults.kernel_overhead);
}

TEST_CASE("the contract's example scenario loads as a whole") {
  const auto s = config::load_scenario({"w.yaml", contract_workload}, {"p.yaml", contract_platform});
  CHECK(s.workload.plan.world_size() <= s.cluster.device_count());
}

TEST_CASE("the catalogue's DGX A100 platform reads 200Gb/s as 25 GB/s and keeps its operator model") {
  const auto c = config::parse_platform(
      config::read_input(std::filesystem::path(TWOCS_SOURCE_DIR) / "platforms/dgx-a100-80gb.yaml"));
  CHECK(c.network.link.bandwidth.value() == doctest::Approx(25e9));
  CHECK(c.network.nodes_per_switch == 20);
  CHECK(c.device.memory.value() == 85899345920.0);
  CHECK(c.device.roofline.kernel_overhead.value() == doctest::Approx(4e-6));
  CHECK(c.name == "dgx-a100-80gb");
}

TEST_CASE("defaults of the workload file") {
  const auto w = config::parse_workload({"some/dir/my-model.yaml", test::small_workload});
  CHECK(w.model.name == "my-model"); // the file's stem
  CHECK(w.model.kv_heads == 8);      // = heads
  CHECK(w.model.ffn_hidden == 2048); // = 4 * hidden
  CHECK(w.model.ffn_kind == model::FfnKind::gelu);
  CHECK(w.plan.dtype == model::Dtype::bf16);
  CHECK_FALSE(w.plan.parallelism.sequence);
  CHECK(w.plan.parallelism.virtual_stages == 1);
  CHECK(w.plan.parallelism.stage_layers.empty());
  CHECK(w.plan.pipeline_schedule == model::PipelineSchedule::one_f_one_b);
  CHECK(w.plan.recompute == model::Recompute::none);
  CHECK(w.plan.optimizer.kind == model::OptimizerKind::adam);
  CHECK(w.plan.optimizer.sharding == model::OptimizerSharding::none);
  CHECK(w.plan.overlap.dp_grad_reduce);
  CHECK(w.plan.overlap.bucket_size.value() == 25e6);
  CHECK(w.plan.overlap.tp_async_backward);
  CHECK_FALSE(w.plan.overlap.shared_experts); // Megatron-Core's defaults: both off
  CHECK_FALSE(w.plan.overlap.expert_wgrad);
  CHECK_FALSE(w.plan.overlap.expert_comm);
}

TEST_CASE("virtual_stages > 1 defaults the schedule to interleaved-1f1b") {
  const auto w = config::parse_workload({"w.yaml", test::small_workload}, {"training.parallelism.virtual_stages=2"});
  CHECK(w.plan.parallelism.virtual_stages == 2);
  CHECK(w.plan.pipeline_schedule == model::PipelineSchedule::interleaved_one_f_one_b);
}

TEST_CASE("texts that are not files are named 'default'") {
  CHECK(config::parse_workload({"<stdin>", test::small_workload}).model.name == "default");
  CHECK(config::parse_platform({"<embedded x>", "device: {peak_flops: {bf16: 1TFLOP/s}, memory: 1GB, "
                                                "memory_bandwidth: 1TB/s}\nnode: {devices: 1, interconnect: "
                                                "{bandwidth: 1GB/s, latency: 1us}}\ncluster: {nodes: 1, network: "
                                                "{bandwidth: 1GB/s, latency: 1us}}\n"})
            .name == "default");
}

TEST_CASE("optional keys of the workload file are read") {
  const auto w = config::parse_workload({"w.yaml", R"(model: {name: m, layers: 8, hidden: 512, heads: 8, kv_heads: 2,
  ffn_hidden: 1376, ffn_kind: swiglu, vocab: 1000, seq_len: 128}
training:
  global_batch: 16
  micro_batch: 2
  dtype: fp8
  parallelism: {tensor: 2, pipeline: 2, data: 2, sequence: true, virtual_stages: 2, stage_layers: [1, 3, 2, 2]}
  recompute: selective
  optimizer: {kind: sgd, sharding: full}
  overlap: {dp_grad_reduce: false, bucket_size: 40MiB, tp_async_backward: false, shared_experts: true,
            expert_wgrad: true}
)"});
  CHECK(w.model.kv_heads == 2);
  CHECK(w.model.ffn_hidden == 1376);
  CHECK(w.model.ffn_kind == model::FfnKind::swiglu);
  CHECK(w.plan.dtype == model::Dtype::fp8);
  CHECK(w.plan.parallelism.sequence);
  CHECK(w.plan.parallelism.stage_layers == std::vector<std::int64_t>{1, 3, 2, 2});
  CHECK(w.plan.pipeline_schedule == model::PipelineSchedule::interleaved_one_f_one_b);
  CHECK(w.plan.recompute == model::Recompute::selective);
  CHECK(w.plan.optimizer.kind == model::OptimizerKind::sgd);
  CHECK(w.plan.optimizer.sharding == model::OptimizerSharding::full);
  CHECK_FALSE(w.plan.overlap.dp_grad_reduce);
  CHECK(w.plan.overlap.bucket_size.value() == 40.0 * 1024 * 1024);
  CHECK_FALSE(w.plan.overlap.tp_async_backward);
  CHECK(w.plan.overlap.shared_experts);
  CHECK(w.plan.overlap.expert_wgrad);
}

TEST_CASE("overlap.expert_comm reads on a plan with expert parallelism") {
  const auto w =
      config::parse_workload({"w.yaml", R"(model: {layers: 2, hidden: 512, heads: 8, vocab: 1000, seq_len: 128,
  moe: {experts: 8, top_k: 2, expert_ffn_hidden: 512}}
training:
  global_batch: 8
  micro_batch: 1
  parallelism: {tensor: 1, pipeline: 1, data: 2, expert: 2}
  overlap: {expert_comm: true}
)"});
  CHECK(w.plan.overlap.expert_comm);
  CHECK(w.plan.overlap.dp_grad_reduce); // the keys not given keep their defaults
}

TEST_CASE("recompute: selective-op reads as torchtitan's per-operator checkpointing") {
  const auto w =
      config::parse_workload({"w.yaml", R"(model: {layers: 2, hidden: 512, heads: 8, vocab: 1000, seq_len: 128}
training: {global_batch: 2, micro_batch: 1, parallelism: {tensor: 1, pipeline: 1, data: 2}, recompute: selective-op}
)"});
  CHECK(w.plan.recompute == model::Recompute::selective_op);
  CHECK(model::to_string(w.plan.recompute) == "selective-op");
}

TEST_CASE("training.recompute_modules lists Megatron-Core's modules for recompute: selective") {
  const std::string base = R"(model: {layers: 2, hidden: 512, heads: 8, vocab: 1000, seq_len: 128,
  moe: {experts: 4, top_k: 2, expert_ffn_hidden: 256}}
training: {global_batch: 2, micro_batch: 1, parallelism: {tensor: 1, pipeline: 1, data: 2}, recompute: selective
)";
  // Without the key: Megatron-Core's default, the attention core.
  CHECK(config::parse_workload({"w.yaml", base + "}\n"}).plan.recompute_modules == model::RecomputeModules{});
  const auto w = config::parse_workload({"w.yaml", base + ", recompute_modules: [moe_act, layernorm]}\n"});
  CHECK(model::names_of(w.plan.recompute_modules) == std::vector<std::string_view>{"moe_act", "layernorm"});
  CHECK_FALSE(w.plan.recompute_modules.core_attn);
  // An empty list recomputes nothing; --set gives a list too.
  CHECK(config::parse_workload({"w.yaml", base + ", recompute_modules: []}\n"}).plan.recompute_modules ==
        model::no_recompute_modules());
  CHECK(config::parse_workload({"w.yaml", base + "}\n"}, {"training.recompute_modules=[mlp, core_attn]"})
            .plan.recompute_modules == model::with_recompute_module(model::RecomputeModules{}, 4));
  // Bad lists name the item and the fix.
  const auto twice = test::workload_error(base + ", recompute_modules: [mlp, mlp]}\n");
  CHECK(std::string(twice.what()).find("lists mlp twice") != std::string::npos);
  CHECK(test::where(twice) == "w.yaml:4:28"); // the second mlp
  const auto unknown = test::workload_error(base + ", recompute_modules: [router]}\n");
  CHECK(std::string(unknown.what()).find("training.recompute_modules[0] cannot be 'router'") != std::string::npos);
  const auto scalar = test::workload_error(base + ", recompute_modules: layernorm}\n");
  CHECK(std::string(scalar.what()).find("must be a list") != std::string::npos);
  // Other modes keep the list but ignore it (Megatron-Core reads it only for granularity
  // selective), so that a sweep over training.recompute needs no second key.
  const auto full = config::parse_workload({"w.yaml", base + "}\n"},
                                           {"training.recompute=full", "training.recompute_modules=[moe_act]"});
  CHECK(full.plan.recompute == model::Recompute::full);
}

TEST_CASE("training.recompute_layers reads Megatron-LM's --recompute-num-layers of the block method") {
  const std::string base = R"(model: {layers: 8, hidden: 512, heads: 8, vocab: 1000, seq_len: 128}
training: {global_batch: 2, micro_batch: 1, parallelism: {tensor: 1, pipeline: 1, data: 2}, recompute: full
)";
  CHECK(config::parse_workload({"w.yaml", base + "}\n"}).plan.recompute_layers == 0); // every layer
  CHECK(config::parse_workload({"w.yaml", base + ", recompute_layers: 5}\n"}).plan.recompute_layers == 5);
  CHECK(config::parse_workload({"w.yaml", base + "}\n"}, {"training.recompute_layers=3"}).plan.recompute_layers == 3);
  const auto zero = test::workload_error(base + ", recompute_layers: 0}\n");
  CHECK(std::string(zero.what()).find("training.recompute_layers must be positive") != std::string::npos);
  CHECK(test::where(zero) == "w.yaml:3:21"); // the 0
}

TEST_CASE("optional keys of the platform file are read") {
  const auto c = config::parse_platform({"p.yaml", test::small_platform},
                                        {"device.operator_model={gemm_efficiency: 0.6, memory_efficiency: 0.9, "
                                         "kernel_overhead: 7us}",
                                         "cluster.network.topology=switch", "cluster.network.nodes_per_switch=4",
                                         "cluster.network.oversubscription=2.5"});
  CHECK(c.device.roofline.gemm_efficiency == 0.6);
  CHECK(c.device.roofline.memory_efficiency == 0.9);
  CHECK(c.device.roofline.kernel_overhead.value() == doctest::Approx(7e-6));
  CHECK(c.network.topology == hardware::NetworkTopology::switch_);
  CHECK(c.network.nodes_per_switch == 4);
  CHECK(c.network.oversubscription == 2.5);
  CHECK(c.node.topology == hardware::NodeTopology::switch_); // default
  CHECK(c.network.link.bandwidth.value() == doctest::Approx(10e9));
}

TEST_CASE("block and flow (JSON) style give equal results") {
  CHECK(dump(config::parse_workload({"a.yaml", contract_workload})) ==
        dump(config::parse_workload({"b.json", contract_workload_json})));
  CHECK(dump(config::parse_platform({"a.yaml", contract_platform})) ==
        dump(config::parse_platform({"b.json", contract_platform_json})));
}

TEST_CASE("the embedded default scenario loads and is named after its files") {
  const auto workload = config::embedded_default_workload();
  const auto platform = config::embedded_default_platform();
  CHECK(workload.name == "<embedded workloads/default.yaml>");
  CHECK(platform.name == "<embedded platforms/dgx-a100-80gb.yaml>");
  const auto from_files = config::load_scenario(
      config::ScenarioSources{std::filesystem::path(TWOCS_SOURCE_DIR) / "workloads/default.yaml",
                              std::filesystem::path(TWOCS_SOURCE_DIR) / "platforms/dgx-a100-80gb.yaml",
                              {}});
  const auto embedded = config::load_scenario(config::ScenarioSources{});
  CHECK(dump(embedded.workload) == dump(from_files.workload));
  CHECK(dump(embedded.cluster) == dump(from_files.cluster));
}

TEST_CASE("read_input reads a whole file under its path") {
  const auto path = std::filesystem::path(TWOCS_SOURCE_DIR) / "workloads/gpt3-175b.yaml";
  const auto input = config::read_input(path);
  CHECK(input.name == path.string());
  CHECK(input.text.find("gpt3-175b") != std::string::npos);
}
