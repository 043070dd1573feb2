#include "collbench_command.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include <twocs/config/scenario_loader.hpp>
#include <twocs/engine/simulate.hpp>
#include <twocs/error.hpp>
#include <twocs/fileio/output_file.hpp>
#include <twocs/lowering/collective_algorithm_lowering.hpp>
#include <twocs/lowering/collective_lowering.hpp>
#include <twocs/lowering/collective_protocol.hpp>
#include <twocs/platform/collective_context.hpp>
#include <twocs/report/collbench_table.hpp>
#include <twocs/units/parse.hpp>

namespace twocs::cli {
namespace {

constexpr const char* size_fix =
    "write bytes (8), a number with K, M, G or T for powers of 1024 (128K, 1M, 8G), or a unit (8MiB, 1GB)";

/// A size flag's value in nccl-tests' form or a twocs unit (units::parse_nccl_bytes), at least one
/// byte. A bad one is located as a `--set` value is (docs/errors.md): `-b VALUE:1:COLUMN`.
units::Bytes parse_size(const std::string& text, const char* letter, const char* flags) {
  std::string problem;
  std::size_t offset = 0;
  try {
    const units::Bytes b = units::parse_nccl_bytes(text);
    if (b.value() >= 1) return units::Bytes(std::floor(b.value())); // whole bytes, as nccl-tests' size_t
    problem = fmt::format("'{}' is {:.0f} bytes; a size is at least 1 byte", text, b.value());
  } catch (const units::UnitError& e) {
    problem = fmt::format("'{}' is not a size: {}", text, e.what());
    offset = e.offset();
  }
  InputError error(problem, flags, size_fix);
  error.set_location({fmt::format("{} {}", letter, text), 1, static_cast<int>(offset) + 1});
  throw error;
}

/// The next row's size: nccl-tests' `size = size*args->stepfactor` on a whole number of bytes
/// (TimeTest), at least one byte more so that a factor near 1 still advances.
units::Bytes next_size(units::Bytes size, double factor) {
  return units::Bytes(std::max(std::floor(size.value() * factor), size.value() + 1));
}

/// What every size of one collbench invocation shares: the group, the platform and its policy.
struct Bench {
  const platform::Topology& topology;
  lowering::CollectivePolicy policy; // the asked algorithm for every kind, the lowering mode
  std::vector<lowering::DeviceId> devices;
  lowering::CollectiveKind kind;
  int chunks = 1;
  std::optional<int> channels;
  double bus_factor = 1;
};

/// The simulated time of one collective of `size` on an otherwise idle platform, chosen, shaped
/// and lowered by the functions `twocs run` uses (lowering::choose_collective, make_schedule).
report::CollbenchRow bench_one(const Bench& bench, units::Bytes size) {
  lowering::CollectiveChoice choice =
      lowering::choose_collective(bench.policy, model::CommGroup::data, bench.kind, size, bench.devices);
  lowering::ScheduleShape& shape = choice.shape;
  shape.chunks = bench.chunks;
  if (bench.channels) shape.channels = *bench.channels;
  const auto schedule = lowering::make_schedule(choice.algorithm, bench.kind, size, shape);
  lowering::TaskGraph graph(static_cast<lowering::DeviceId>(bench.topology.devices));
  lowering::Transfer prototype;
  prototype.group = model::CommGroup::data;
  lowering::TaskTag tag;
  tag.label = graph.intern_label(
      fmt::format("{}.{}", lowering::to_string(bench.kind), lowering::to_string(schedule.algorithm)));
  (void)lowering::add_schedule(graph, schedule, bench.devices, tag, prototype);
  const auto timeline = engine::simulate(graph, bench.topology);
  report::CollbenchRow row;
  row.size = size;
  row.time = timeline.makespan;
  row.algbw = row.time.value() > 0 ? size / row.time : units::ByteRate(0);
  row.busbw = row.algbw * bench.bus_factor;
  const bool coarse = schedule.algorithm == lowering::Algorithm::ring && !schedule.messages.empty() &&
                      schedule.messages.front().latency_steps > 1 + shape.protocol_latency_steps;
  row.algorithm = std::string(lowering::to_string(schedule.algorithm)) + (coarse ? "-coarse" : "");
  return row;
}

/// The group: `n` ranks, `per_node` on each node spread evenly over its devices (as the
/// data-parallel peers of a plan whose tensor-parallel groups fill the rest of the node), or the
/// first `n` devices.
std::vector<lowering::DeviceId> group_devices(std::int64_t n, std::optional<std::int64_t> per_node,
                                              std::int64_t node_devices) {
  std::vector<lowering::DeviceId> devices;
  const std::int64_t k = per_node.value_or(node_devices);
  const std::int64_t stride = per_node ? node_devices / k : 1;
  for (std::int64_t i = 0; i < n; ++i)
    devices.push_back(static_cast<lowering::DeviceId>(per_node ? (i / k) * node_devices + (i % k) * stride : i));
  return devices;
}

/// collbench models the interconnects only: a --set of a device key (peak rates, memory, the
/// operator model) or of a what-if scale of them would change nothing it prints, so it is
/// refused rather than ignored, as a workload key is (config::parse_platform).
void refuse_device_overrides(const std::vector<std::string>& overrides) {
  constexpr std::array<std::string_view, 3> device_scales = {"whatif.compute_scale", "whatif.memory_capacity_scale",
                                                             "whatif.memory_bandwidth_scale"};
  for (const std::string& o : overrides) {
    const std::string key = o.substr(0, o.find('='));
    const bool device = key == "device" || key.starts_with("device.") ||
                        std::find(device_scales.begin(), device_scales.end(), key) != device_scales.end();
    if (!device) continue;
    InputError error(fmt::format("--set key '{}' does not affect collbench, which models only the node and "
                                 "cluster interconnects",
                                 key),
                     {},
                     "remove it: collbench takes name, node.*, cluster.* and whatif.* keys; device keys matter "
                     "to twocs run");
    error.set_location({"--set " + o, 1, 1});
    throw error;
  }
}

/// An error about --algorithm, located as a --set value is (docs/errors.md): `--algorithm NAME:1:1`.
InputError at_algorithm(const std::string& name, InputError error) {
  error.set_location({fmt::format("--algorithm {}", name), 1, 1});
  return error;
}

/// An in-network reduction asked for where no switch reduces for this group is refused rather
/// than run as the ring it would fall back to (docs/network.md, "In-network reduction").
void require_in_network(const Bench& bench, lowering::Algorithm asked, const std::string& name) {
  using lowering::Algorithm;
  if (asked != Algorithm::in_network && asked != Algorithm::in_network_tree) return;
  if (bench.kind != lowering::CollectiveKind::all_reduce)
    throw InputError(fmt::format("--algorithm {}: in-network reduction is modelled for all-reduce only", name),
                     "--algorithm", "use --collective all-reduce, or auto");
  const auto shape =
      lowering::choose_collective(bench.policy, model::CommGroup::data, bench.kind, units::Bytes(1), bench.devices)
          .shape;
  if (lowering::scheduled_algorithm(asked, bench.kind, shape) == asked) return;
  const bool spans = shape.ranks_per_node > 0 && shape.ranks_per_node < shape.ranks;
  throw InputError(
      fmt::format("--algorithm {}: no switch reduces for this group ({})", name,
                  asked == Algorithm::in_network_tree
                      ? "nvls-tree needs several ranks per node, across nodes, on nodes whose switch reduces"
                  : spans ? "across nodes it needs cluster.network.in_network_efficiency > 0 (SHARP) and, with several "
                            "ranks per node, node.interconnect.in_network_efficiency > 0"
                          : "inside a node it needs node.interconnect.in_network_efficiency > 0 (NVLS)"),
      "--algorithm",
      "use auto, ring or tree, or give the platform in-network reduction with --set (e.g. "
      "node.interconnect.in_network_efficiency=0.85)");
}

/// nccl-tests' flags (v2.16.9 src/common.cu, getopt_long: -b/--minbytes, -e/--maxbytes,
/// -f/--stepfactor, -g/--ngpus, -n/--iters, -w/--warmup_iters) beside twocs's long names.
void add_nccl_tests_options(CLI::App& c, CollbenchOptions& o) {
  c.add_option("--min-bytes,--minbytes,-b", o.min_bytes,
               "Smallest size (nccl-tests -b): bytes (8), K/M/G/T for powers of 1024 (128K, 1M, 8G), or a unit "
               "(8MiB, 1GB); default 8MiB");
  c.add_option("--max-bytes,--maxbytes,-e", o.max_bytes, "Largest size (nccl-tests -e), as -b; default 1GiB");
  c.add_option("--factor,--stepfactor,-f", o.factor, "Size multiplier between rows (nccl-tests -f)")
      ->check(CLI::Range(1.01, 1e6));
  c.add_option("-g,--ngpus", o.ngpus, "Devices in the group (nccl-tests -g): the same as --devices")
      ->check(CLI::PositiveNumber);
  c.add_option("-n,--iters", o.iters,
               "Timed iterations (nccl-tests -n), echoed in the header: the simulation is deterministic, so every "
               "iteration takes the same time")
      ->check(CLI::PositiveNumber);
  c.add_option("-w,--warmup_iters", o.warmup_iters,
               "Warm-up iterations (nccl-tests -w), echoed in the header: none changes the simulated time")
      ->check(CLI::NonNegativeNumber);
}

} // namespace

CLI::App* add_collbench_command(CLI::App& app, CollbenchOptions& o) {
  auto* c = app.add_subcommand("collbench", "Simulate one collective over a range of sizes and print nccl-tests' "
                                            "table (size count type redop root, time algbw busbw #wrong out of "
                                            "place and in place); takes nccl-tests' -b -e -f -g -n -w");
  c->add_option("--platform", o.platform, "Platform YAML; default: the embedded DGX A100 cluster");
  c->add_option("--set", o.overrides, "Override any platform key by its dotted path, e.g. cluster.nodes=4")
      ->take_all()
      ->allow_extra_args(false);
  c->add_option("--collective", o.collective, "all-reduce, all-gather, reduce-scatter, all-to-all, broadcast")
      ->check(CLI::IsMember({"all-reduce", "all-gather", "reduce-scatter", "all-to-all", "broadcast", "send-recv"}));
  c->add_option("--devices", o.devices, "Devices in the group (the first N, in node order); default: one node")
      ->check(CLI::PositiveNumber);
  c->add_option("--per-node", o.per_node,
                "Ranks of the group on each node, spread evenly over its devices (as mpirun's ppr:K:node); "
                "default: every device of a node")
      ->check(CLI::PositiveNumber);
  add_nccl_tests_options(*c, o);
  c->add_option(
      "--algorithm", o.algorithm,
      "auto, ring, tree, halving-doubling, hierarchical, in-network (NVLS/SHARP), nvls-tree, direct, pairwise");
  c->add_option("--chunks", o.chunks, "Pipeline slices per channel")->check(CLI::Range(1, 4096));
  c->add_option("--channels", o.channels, "Parallel rings/trees")->check(CLI::Range(1, 256));
  c->add_option("--json", o.json, "Write the rows as JSON to FILE");
  c->add_option("--collective-lowering", o.collective_lowering,
                "Rings step by step (step, the default), as one transfer per ring link and channel (coarse), or "
                "coarse when large (auto)")
      ->check(CLI::IsMember({"step", "coarse", "auto"}));
  return c;
}

namespace {

/// The group: its size (--devices, or nccl-tests' -g when only it is given, else --per-node ranks
/// or one node) and the devices its nodes span, refused where the platform cannot hold it.
struct Group {
  std::int64_t size = 0;
  std::int64_t span = 0; // devices the group's nodes hold
  std::string placement;
};

Group resolve_group(const CollbenchOptions& o, const hardware::ClusterSpec& cluster) {
  const std::int64_t node_devices = cluster.node.devices;
  if (o.devices && o.ngpus && *o.devices != *o.ngpus)
    throw InputError(fmt::format("-g/--ngpus {} and --devices {} give two group sizes", *o.ngpus, *o.devices),
                     "-g/--ngpus", "give one of them: -g N is nccl-tests' name for --devices N");
  const std::string flag = o.ngpus && !o.devices ? "-g/--ngpus" : "--devices";
  if (o.per_node && node_devices % *o.per_node != 0)
    throw InputError(fmt::format("--per-node {}: a node has {} devices", *o.per_node, node_devices), "--per-node",
                     fmt::format("use a divisor of {}", node_devices));
  Group g;
  g.size = o.devices.value_or(o.ngpus.value_or(o.per_node.value_or(node_devices)));
  if (o.per_node && g.size % *o.per_node != 0)
    throw InputError(fmt::format("{} {}: not a whole number of nodes at --per-node {}", flag, g.size, *o.per_node),
                     flag, fmt::format("use a multiple of {}", *o.per_node));
  g.span = o.per_node ? g.size / *o.per_node * node_devices : g.size;
  if (g.span > cluster.device_count())
    throw InputError(fmt::format("{} {}: the platform has {} devices", flag, g.size, cluster.device_count()), flag,
                     fmt::format("use at most {}, or add nodes with --set cluster.nodes=N", cluster.device_count()));
  g.placement = o.per_node ? fmt::format("{} per node over each node's {} devices", *o.per_node, node_devices)
                           : fmt::format("the first {} devices", g.size);
  return g;
}

} // namespace

void run_collbench(const CollbenchOptions& o, std::ostream& out) {
  const units::Bytes min = parse_size(o.min_bytes, "-b", "-b/--minbytes"); // flags first (docs/errors.md)
  const units::Bytes max = parse_size(o.max_bytes, "-e", "-e/--maxbytes");
  const config::InputText input = o.platform ? config::read_input(*o.platform) : config::embedded_default_platform();
  refuse_device_overrides(o.overrides);
  const hardware::ClusterSpec cluster = config::parse_platform(input, o.overrides);
  const Group group = resolve_group(o, cluster);
  const auto kind = *lowering::collective_kind_from_string(o.collective);
  const auto algorithm = lowering::algorithm_from_string(o.algorithm);
  if (!algorithm)
    throw at_algorithm(o.algorithm, InputError(fmt::format("--algorithm {}: unknown", o.algorithm), "--algorithm",
                                               "use auto, ring, tree, halving-doubling, hierarchical, in-network, "
                                               "nvls-tree, direct or pairwise"));
  report::CollbenchResult result;
  result.settings = {min, max, o.factor, o.iters, o.warmup_iters, group.placement};
  const platform::Topology topology = platform::build_topology(cluster, group.span);
  Bench bench{topology,
              platform::collective_policy(cluster, group.span),
              group_devices(group.size, o.per_node, cluster.node.devices),
              kind,
              o.chunks,
              o.channels,
              report::bus_factor(o.collective, group.size)};
  bench.policy.algorithms.fill(*algorithm);
  try {
    require_in_network(bench, *algorithm, o.algorithm);
  } catch (InputError& e) {
    throw at_algorithm(o.algorithm, std::move(e));
  }
  bench.policy.lowering = *lowering::collective_lowering_from_string(o.collective_lowering);
  result.platform = cluster.name;
  result.collective = o.collective;
  result.devices = group.size;
  for (units::Bytes size = min; size <= max * (1 + 1e-9); size = next_size(size, o.factor))
    result.rows.push_back(bench_one(bench, size));
  report::write_collbench_table(out, result);
  if (o.json) fileio::write_file_atomically(*o.json, report::collbench_json(result));
}

} // namespace twocs::cli
