#include "show_command.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <twocs/config/parameter_provenance.hpp>
#include <twocs/config/scenario_loader.hpp>
#include <twocs/cost/gemm_timing.hpp>
#include <twocs/cost/kernel_cost_model.hpp>
#include <twocs/platform/topology.hpp>
#include <twocs/units/format.hpp>

namespace twocs::cli {
namespace {

using units::to_string;

/// The dtype reference kernels run in: bf16 when the device has it, else its first listed.
model::Dtype reference_dtype(const hardware::DeviceSpec& d) {
  for (model::Dtype t : {model::Dtype::bf16, model::Dtype::fp16, model::Dtype::fp8, model::Dtype::fp32})
    if (d.peak(t)) return t;
  return d.peak_flops.begin()->first;
}

std::string tiles_text(const std::vector<hardware::GemmTile>& tiles) {
  if (tiles.empty()) return "none";
  std::string text;
  for (const auto& t : tiles)
    text += fmt::format("{}{}x{}x{}{}", text.empty() ? "" : ", ", t.m, t.n, t.k,
                        t.efficiency != 1.0 ? fmt::format(" (x{:.3g})", t.efficiency) : "");
  return text;
}

void print_device(std::ostream& out, const hardware::DeviceSpec& d) {
  out << fmt::format("device {}\n", d.name);
  std::string peaks;
  for (const auto& [dtype, rate] : d.peak_flops)
    peaks += fmt::format("{}{} {}", peaks.empty() ? "" : ", ", model::to_string(dtype), to_string(rate));
  out << fmt::format("  {:<22} {}\n", "peak", peaks);
  out << fmt::format("  {:<22} {} at {}\n", "memory", to_string(d.memory), to_string(d.memory_bandwidth));
  const auto& r = d.roofline;
  const auto& k = d.kernels;
  out << fmt::format("  {:<22} gemm_efficiency {:.4g}{}, gemm_k_half {:.4g}, memory_efficiency {:.4g}, "
                     "kernel_overhead {}\n",
                     "operator model", r.gemm_efficiency,
                     r.fp8_gemm_efficiency ? fmt::format(" (fp8 {:.4g})", *r.fp8_gemm_efficiency) : std::string(),
                     k.gemm_k_half, r.memory_efficiency, to_string(r.kernel_overhead));
  std::string matrix;
  for (auto t : k.matrix_dtypes) matrix += fmt::format("{}{}", matrix.empty() ? "" : ", ", model::to_string(t));
  out << fmt::format("  {:<22} {} compute units; tiles {} ({}); vector tiles {}, efficiency {:.4g}\n", "",
                     k.compute_units, tiles_text(k.gemm_tiles), matrix.empty() ? "every dtype" : matrix,
                     tiles_text(k.vector_tiles), k.vector_gemm_efficiency.value_or(r.gemm_efficiency));
  out << fmt::format("  {:<22} vector arithmetic {}; measured kernels {}\n", "",
                     k.vector_flops ? to_string(*k.vector_flops) : std::string("at the GEMM roof"), k.measured.size());
}

void print_network(std::ostream& out, const hardware::ClusterSpec& c) {
  const auto& n = c.node.interconnect;
  out << fmt::format("node: {} devices on a {}, {} per device per direction, x{:.3g} sustained = {}, latency {}\n",
                     c.node.devices, to_string(c.node.topology), to_string(n.bandwidth), n.efficiency,
                     to_string(n.bandwidth * n.efficiency), to_string(n.latency));
  if (c.node.host_launch_time.value() > 0)
    out << fmt::format("host: {} per kernel launch (docs/simulation.md, \"Host launches\")\n",
                       to_string(c.node.host_launch_time));
  const auto& w = c.network;
  out << fmt::format("network: {} nodes, {}, {} per NIC per direction, x{:.3g} sustained = {}, latency {}, "
                     "oversubscription {:.3g}, {} nodes per leaf switch\n",
                     c.nodes, to_string(w.topology), to_string(w.link.bandwidth), w.link.efficiency,
                     to_string(w.link.bandwidth * w.link.efficiency), to_string(w.link.latency), w.oversubscription,
                     w.nodes_per_switch);
  out << fmt::format("         routing {}{}", to_string(w.routing),
                     w.routing == hardware::Routing::ecmp ? fmt::format(" (seed {})", w.ecmp_seed) : "");
  if (w.topology == hardware::NetworkTopology::rail_fat_tree)
    out << fmt::format(", across rails: {}", to_string(w.cross_rail));
  if (!w.torus_dimensions.empty()) out << fmt::format(", torus {}", fmt::join(w.torus_dimensions, " x "));
  if (w.switches_per_group > 0) out << fmt::format(", {} routers per group", w.switches_per_group);
  if (w.fabric_bandwidth.value() > 0) out << fmt::format(", fabric links {}", to_string(w.fabric_bandwidth));
  if (w.hop_latency.value() > 0) out << fmt::format(", {} per hop", to_string(w.hop_latency));
  out << '\n';
}

struct Reference {
  const char* what = "";
  model::ComputeOp op;
};

model::ComputeOp gemm(model::Dtype dtype, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch = 1) {
  model::ComputeOp op;
  op.kind = batch > 1 ? model::OpKind::batched_gemm : model::OpKind::gemm;
  op.dtype = dtype;
  op.gemm = model::GemmShape{m, n, k, batch};
  op.flops = op.gemm->flops();
  op.bytes = op.gemm->operand_bytes(dtype);
  return op;
}

model::ComputeOp streaming(model::OpKind kind, model::Dtype dtype, double elements, double bytes_per_element,
                           double flops_per_element) {
  model::ComputeOp op;
  op.kind = kind;
  op.dtype = dtype;
  op.bytes = units::Bytes(elements * bytes_per_element);
  op.flops = units::Flops(elements * flops_per_element);
  return op;
}

void print_references(std::ostream& out, const cost::KernelCostModel& model, model::Dtype t) {
  const double e = model::element_size(t);
  const Reference references[] = {
      {"gemm 4096 x 4096 x 4096", gemm(t, 4096, 4096, 4096)},
      {"gemm 8192 x 8192 x 8192", gemm(t, 8192, 8192, 8192)},
      {"gemm 8192 x 2304 x 6144 (22B QKV, t=8)", gemm(t, 8192, 2304, 6144)},
      {"gemm 2048 x 4608 x 12288 (175B QKV, t=8)", gemm(t, 2048, 4608, 12288)},
      {"gemm 16 x 8192 x 8192 (skinny)", gemm(t, 16, 8192, 8192)},
      {"attention scores 2048 x 2048 x 128 x 32", gemm(t, 2048, 2048, 128, 32)},
      {"layernorm 8192 x 6144", streaming(model::OpKind::normalization, t, 8192.0 * 6144, 2 * e, 8)},
      {"softmax 32 x 2048 x 2048", streaming(model::OpKind::softmax, t, 32.0 * 2048 * 2048, 2 * e, 5)},
      {"adam 1e9 parameters", streaming(model::OpKind::optimizer, t, 1e9, 24 + 2 * e, 12)},
  };
  const units::FlopRate peak = *model.device().peak(t);
  out << fmt::format("\nreference kernels in {} (formula, without measured times)\n", model::to_string(t));
  out << fmt::format("  {:<42} {:>10} {:>13} {:>7} {:>12} {:>6}\n", "kernel", "time", "rate", "% peak", "tile",
                     "waves");
  for (const auto& [what, op] : references) {
    const units::Seconds time = model.formula_duration(op);
    std::string rate, share, tile, waves;
    if (op.gemm) {
      const auto t_gemm = cost::time_gemm(model.device(), *op.gemm, t);
      rate = to_string(op.flops / time);
      share = fmt::format("{:.1f}%", 100.0 * (op.flops / time) / peak);
      if (t_gemm.waves > 0) {
        tile = fmt::format("{}x{}{}", t_gemm.transposed ? t_gemm.tile.n : t_gemm.tile.m,
                           t_gemm.transposed ? t_gemm.tile.m : t_gemm.tile.n,
                           t_gemm.splits > 1 ? fmt::format(" /{}", t_gemm.splits) : "");
        waves = fmt::format("{}", t_gemm.waves);
      }
    } else {
      rate = to_string(op.bytes / time);
    }
    out << fmt::format("  {:<42} {:>10} {:>13} {:>7} {:>12} {:>6}\n", what, to_string(time), rate, share, tile, waves);
  }
}

void print_collective(std::ostream& out, const hardware::ClusterSpec& c) {
  const std::int64_t n = c.node.devices;
  if (n < 2) return;
  const auto topology = platform::build_topology(c, n);
  const units::Bytes size(256.0 * 1048576.0);
  // Ring all-reduce on an idle network: 2 (n-1)/n S / B + 2 (n-1) L (Patarasuk & Yuan 2009).
  const double steps = 2.0 * static_cast<double>(n - 1);
  const units::Seconds time =
      size * (steps / static_cast<double>(n)) / topology.route_bandwidth(0, 1) + topology.route_latency(0, 1) * steps;
  out << fmt::format("\nring all-reduce of {} over the {} devices of a node: {} (bus bandwidth {})\n", to_string(size),
                     n, to_string(time), to_string(size * (steps / static_cast<double>(n)) / time));
}

/// Each parameter's value, class and source (docs/platform-model.md, "Provenance").
void print_provenance(std::ostream& out, const config::PlatformProvenance& p) {
  out << "\nprovenance of each parameter (docs/platform-model.md, \"Provenance\")\n";
  for (const auto& s : p.parameters) {
    out << fmt::format("  {:<44} {:<12} {}\n", s.parameter, config::to_string(s.kind), s.value);
    if (!s.source.empty()) out << fmt::format("      {}\n", s.source);
    if (!s.rule.empty()) out << fmt::format("      rule: {}\n", s.rule);
    if (!s.sensitivity.empty()) out << fmt::format("      sensitivity: {}\n", s.sensitivity);
  }
}

} // namespace

CLI::App* add_show_command(CLI::App& app, ShowOptions& o) {
  auto* show = app.add_subcommand("show", "Print an input as twocs resolves it");
  show->require_subcommand(1);
  auto* p = show->add_subcommand("platform", "The device, node and network parameters and the operator model's "
                                             "predictions for reference kernels");
  p->add_option("file", o.platform, "Platform YAML; default: the embedded DGX A100 cluster");
  p->add_option("--set", o.overrides, "Override any platform key by its dotted path, e.g. cluster.nodes=4")
      ->take_all()
      ->allow_extra_args(false);
  return show;
}

void run_show_platform(const ShowOptions& options, std::ostream& out) {
  const config::InputText input =
      options.platform ? config::read_input(*options.platform) : config::embedded_default_platform();
  const hardware::ClusterSpec cluster = config::parse_platform(input, options.overrides);
  out << fmt::format("platform {} ({})\n", cluster.name, input.name);
  print_device(out, cluster.device);
  print_network(out, cluster);
  print_references(out, cost::KernelCostModel(cluster.device), reference_dtype(cluster.device));
  print_collective(out, cluster);
  print_provenance(out, config::read_platform_provenance(input, options.overrides));
}

} // namespace twocs::cli
