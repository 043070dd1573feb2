// One collective model for `twocs run` and `twocs collbench` (issue: a ring in `run` that spanned
// nodes crossed each node boundary through one NIC while collbench used every NIC): a collective
// lowered the way a training run lowers it (the run's policy, CollectiveRegistry, folded or not)
// takes what `twocs collbench` reports for the same group, size and platform, within 2%, on
// groups inside a node, across nodes with one GPU per node and across nodes with several.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <twocs/config/scenario_loader.hpp>
#include <twocs/cost/roofline.hpp>
#include <twocs/engine/simulate.hpp>
#include <twocs/lowering/device_program.hpp>
#include <twocs/lowering/lower_iteration.hpp>
#include <twocs/platform/collective_context.hpp>
#include <twocs/platform/topology.hpp>

#include "cli/cli_capture.hpp"

using namespace twocs;

namespace {

struct Case {
  const char* name;
  const char* platform;
  std::int64_t nodes;
  std::int64_t per_node; // members of the group on each node
  std::int64_t ranks;
  const char* collective; // collbench's name
  model::Collective kind;
  const char* algorithm;
  const char* size;
  double bytes;
  const char* runs;     // the algorithm that must have run
  const char* set = ""; // one more platform key, KEY=VALUE
};

struct Timed {
  double seconds = 0;
  std::string algorithm;
};

hardware::ClusterSpec cluster_of(const Case& c) {
  std::vector<std::string> overrides = {"cluster.nodes=" + std::to_string(c.nodes)};
  if (*c.set != '\0') overrides.emplace_back(c.set);
  return config::parse_platform(config::read_input(test::source_file(c.platform)), overrides);
}

/// The members as collbench's --per-node places them: spread evenly over each node's devices.
std::vector<lowering::DeviceId> members(const Case& c, std::int64_t node_devices) {
  std::vector<lowering::DeviceId> devices;
  for (std::int64_t i = 0; i < c.ranks; ++i)
    devices.push_back(static_cast<lowering::DeviceId>((i / c.per_node) * node_devices +
                                                      (i % c.per_node) * (node_devices / c.per_node)));
  return devices;
}

Timed collbench(const Case& c, const test::TempDir& dir) {
  std::vector<std::string> args = {"collbench",
                                   "--platform",
                                   test::source_file(c.platform),
                                   "--set",
                                   "cluster.nodes=" + std::to_string(c.nodes),
                                   "--devices",
                                   std::to_string(c.ranks),
                                   "--per-node",
                                   std::to_string(c.per_node),
                                   "--collective",
                                   c.collective,
                                   "--algorithm",
                                   c.algorithm,
                                   "-b",
                                   c.size,
                                   "-e",
                                   c.size,
                                   "--json",
                                   dir.file("bench.json")};
  if (*c.set != '\0') args.insert(args.end(), {"--set", c.set});
  const auto r = test::run_command_line(args);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const auto j = nlohmann::json::parse(test::read_text(dir.file("bench.json")));
  REQUIRE(j["rows"].size() == 1);
  return {j["rows"][0]["time_s"].get<double>(), j["rows"][0]["algorithm"].get<std::string>()};
}

/// The collective as a training run lowers it: the run's policy (automatic lowering, so rings of
/// eight and more ranks are coarse), every member's program joining it through the registry;
/// folded, only `folded_member` runs a program and its peers are mirrored.
Timed run(const Case& c, std::optional<std::size_t> folded_member) {
  const auto cluster = cluster_of(c);
  const auto devices = members(c, cluster.node.devices);
  const std::int64_t span = c.nodes * cluster.node.devices;
  auto policy = platform::collective_policy(cluster, span);
  policy.algorithms.fill(*lowering::algorithm_from_string(c.algorithm));
  policy.lowering = lowering::CollectiveLowering::automatic;
  lowering::TaskGraph graph(static_cast<lowering::DeviceId>(span));
  std::vector<bool> simulated(static_cast<std::size_t>(span), !folded_member.has_value());
  if (folded_member) simulated[static_cast<std::size_t>(devices[*folded_member])] = true;
  lowering::CollectiveRegistry registry(graph, simulated, policy);
  lowering::CollectiveSpec spec;
  spec.kind = c.kind;
  spec.group = model::CommGroup::data;
  spec.size = units::Bytes(c.bytes);
  spec.label = graph.intern_label("agreement");
  for (const lowering::DeviceId d : devices) {
    if (!simulated[static_cast<std::size_t>(d)]) continue;
    lowering::DeviceProgram program(graph, registry, d);
    program.collective(spec, devices, lowering::CollectiveWait{});
  }
  CHECK(registry.pending() == 0);
  REQUIRE(graph.size() > 0);
  return {engine::simulate(graph, platform::build_topology(cluster, span)).makespan.value(),
          std::string(lowering::to_string(graph.transfer(0).algorithm))};
}

constexpr double mib = 1024.0 * 1024.0;

} // namespace

TEST_CASE("run and collbench agree within 2% on every collective: inside a node, one and several GPUs per node") {
  const Case cases[] = {
      {"ring inside a node", "platforms/dgx-a100-80gb.yaml", 1, 8, 8, "all-reduce", model::Collective::all_reduce,
       "ring", "64MiB", 64 * mib, "ring"},
      {"reduce-scatter inside a node", "platforms/dgx-a100-80gb.yaml", 1, 8, 8, "reduce-scatter",
       model::Collective::reduce_scatter, "auto", "64MiB", 64 * mib, "ring"},
      {"NVLS inside a node", "platforms/dgx-h100.yaml", 1, 8, 8, "all-reduce", model::Collective::all_reduce, "auto",
       "256MiB", 256 * mib, "in-network"},
      {"direct on a mesh", "platforms/mi300x.yaml", 1, 8, 8, "all-reduce", model::Collective::all_reduce, "auto",
       "64MiB", 64 * mib, "direct"},
      {"ring, one GPU per node", "platforms/dgx-a100-80gb.yaml", 8, 1, 8, "all-reduce", model::Collective::all_reduce,
       "auto", "64MiB", 64 * mib, "ring"},
      {"all-gather, one GPU per node", "platforms/dgx-h100.yaml", 4, 1, 4, "all-gather", model::Collective::all_gather,
       "auto", "16MiB", 16 * mib, "ring"},
      {"two-node tensor-parallel ring, 8 per node", "platforms/dgx-a100-80gb.yaml", 2, 8, 16, "all-reduce",
       model::Collective::all_reduce, "ring", "24MiB", 24 * mib, "ring"},
      {"ring, 2 per node", "platforms/dgx-h100.yaml", 4, 2, 8, "reduce-scatter", model::Collective::reduce_scatter,
       "auto", "64MiB", 64 * mib, "ring"},
      {"ring, 4 per node, step by step", "platforms/dgx-a100-80gb.yaml", 2, 2, 4, "all-reduce",
       model::Collective::all_reduce, "ring", "8MiB", 8 * mib, "ring"},
      {"all-to-all inside a node", "platforms/dgx-h100.yaml", 1, 8, 8, "all-to-all", model::Collective::all_to_all,
       "auto", "64MiB", 64 * mib, "direct"},
      {"all-to-all, 8 per node", "platforms/dgx-h100.yaml", 2, 8, 16, "all-to-all", model::Collective::all_to_all,
       "auto", "64MiB", 64 * mib, "direct"},
      {"NCCL's tree, 8 per node", "platforms/dgx-a100-80gb.yaml", 2, 8, 16, "all-reduce", model::Collective::all_reduce,
       "auto", "64MiB", 64 * mib, "tree"},
      {"NCCL's tree, one GPU per node", "platforms/dgx-a100-80gb.yaml", 16, 1, 16, "all-reduce",
       model::Collective::all_reduce, "auto", "1MiB", mib, "tree"},
      {"NCCL's tree, 4 per node", "platforms/dgx-h100.yaml", 4, 4, 16, "all-reduce", model::Collective::all_reduce,
       "tree", "32MiB", 32 * mib, "tree"},
      {"NVLS_TREE, 8 per node", "platforms/dgx-h100.yaml", 4, 8, 32, "all-reduce", model::Collective::all_reduce,
       "nvls-tree", "256MiB", 256 * mib, "nvls-tree"},
      {"NVLS and SHARP, 8 per node", "platforms/dgx-h100.yaml", 4, 8, 32, "all-reduce", model::Collective::all_reduce,
       "auto", "256MiB", 256 * mib, "in-network", "cluster.network.in_network_efficiency=0.85"},
      {"SHARP, one GPU per node", "platforms/dgx-h100.yaml", 8, 1, 8, "all-reduce", model::Collective::all_reduce,
       "in-network", "64MiB", 64 * mib, "in-network", "cluster.network.in_network_efficiency=0.85"},
  };
  const test::TempDir dir("agreement");
  for (const Case& c : cases) {
    const std::string name = c.name;
    CAPTURE(name);
    const Timed bench = collbench(c, dir);
    CHECK(bench.algorithm.rfind(c.runs, 0) == 0); // "ring" also matches collbench's "ring-coarse"
    const Timed full = run(c, std::nullopt);
    CHECK(full.algorithm == c.runs);
    CHECK(full.seconds == doctest::Approx(bench.seconds).epsilon(0.02));
    // Folded, from a member in the middle of its node's ring (every channel's ring passes it).
    const Timed folded = run(c, static_cast<std::size_t>((c.ranks / 2 + c.per_node / 2) % c.ranks));
    CHECK(folded.seconds == doctest::Approx(bench.seconds).epsilon(0.02));
  }
}

TEST_CASE("a two-node tensor-parallel all-reduce in a training run runs at collbench's bus bandwidth") {
  // GPT with tensor parallelism 16 over two DGX A100 (8 NICs each): before one model served both,
  // `run` crossed each node boundary through one NIC (12.2 GB/s of bus bandwidth at 25 MB).
  const auto scenario = config::load_scenario({std::nullopt,
                                               test::source_file("platforms/dgx-a100-80gb.yaml"),
                                               {"training.parallelism.tensor=16", "training.parallelism.data=1",
                                                "model.heads=32", "model.layers=2", "training.global_batch=2"}});
  const auto& plan = scenario.workload.plan;
  const cost::RooflineCostModel cost(scenario.cluster.device);
  lowering::LoweringOptions options{true, platform::collective_policy(scenario.cluster, plan.world_size())};
  const auto graph = lowering::lower_iteration(scenario.workload.model, plan, cost, options);
  const auto timeline = engine::simulate(graph, platform::build_topology(scenario.cluster, plan.world_size()));
  // Every tensor-parallel all-reduce of one micro-batch's activations (no sequence parallelism):
  // its span on the timeline from its first message to its last. The vocabulary-parallel
  // cross-entropy's three per-token all-reduces and the optimizer's gradient norm are small and
  // latency-bound: not this size.
  std::map<std::int32_t, std::pair<double, double>> spans;
  for (lowering::TaskId id = 0; id < graph.size(); ++id) {
    if (!graph.task(id).is_transfer() || graph.transfer(id).group != model::CommGroup::tensor) continue;
    const std::string& label = graph.label_of(id);
    if (label.find("cross_entropy") != std::string::npos || label.starts_with("optimizer.")) continue;
    const auto& t = timeline.tasks[id];
    auto [it, fresh] = spans.try_emplace(graph.transfer(id).collective, t.start.value(), t.finish.value());
    it->second = {std::min(it->second.first, t.start.value()), std::max(it->second.second, t.finish.value())};
  }
  // Per layer two forward and two backward, the embedding's and the logits' input gradient's.
  REQUIRE(spans.size() == 2 * 4 + 2);
  const double bytes = static_cast<double>(plan.micro_batch * scenario.workload.model.seq_len *
                                           scenario.workload.model.hidden * 2); // bf16
  const test::TempDir dir("agreement-run");
  const std::string size = std::to_string(static_cast<long long>(bytes)) + "B";
  const auto r = test::run_command_line({"collbench", "--devices", "16", "--set", "cluster.nodes=2", "-b", size, "-e",
                                         size, "--json", dir.file("b.json")});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const double bench = nlohmann::json::parse(test::read_text(dir.file("b.json")))["rows"][0]["time_s"].get<double>();
  CHECK(bytes / bench * 2 * 15 / 16 > 100e9); // bus bandwidth of eight NICs of ~24 GB/s, not one
  for (const auto& [id, span] : spans) {
    CAPTURE(id);
    CHECK(span.second - span.first == doctest::Approx(bench).epsilon(0.02).scale(0)); // relative
  }
}
