#include <twocs/report/summary_table.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include <twocs/units/format.hpp>

namespace twocs::report {
namespace {

/// The approximations a run used, "; " between them, or that it used none.
std::string approximations_line(const analysis::Approximations& a) {
  std::vector<std::string> parts;
  if (a.folded) parts.push_back(fmt::format("folded replicas ({})", a.fold_reason));
  if (a.coarse_collectives > 0)
    parts.push_back(
        fmt::format("coarse rings x{} (--collective-lowering {})", a.coarse_collectives, a.collective_lowering));
  if (a.replay.replayed)
    parts.push_back(fmt::format("steady state replayed: {} of {} micro-batches simulated, {} periods of {} (--replay)",
                                a.replay.simulated, a.replay.micro_batches,
                                (a.replay.micro_batches - a.replay.simulated) / a.replay.period,
                                units::to_string(a.replay.period_time)));
  if (parts.empty()) return "none (every device simulated)";
  std::string line = parts.front();
  for (std::size_t i = 1; i < parts.size(); ++i) line += "; " + parts[i];
  return line;
}

using Out = fmt::memory_buffer;

constexpr int key_width = 26; // "  exposed comm fraction   " and friends

void row(Out& out, std::string_view key, std::string_view value) {
  fmt::format_to(std::back_inserter(out), "  {:<{}}{}\n", key, key_width - 2, value);
}

/// `part` as a percentage of `whole`, or "-" when the whole is zero (an empty iteration).
std::string share(units::Seconds part, units::Seconds whole) {
  if (!(whole.value() > 0.0) || !std::isfinite(part.value())) return "-";
  return fmt::format("{:.1f}%", 100.0 * (part / whole));
}

std::string percent(double fraction) {
  return std::isfinite(fraction) ? fmt::format("{:.1f}%", 100.0 * fraction) : std::string("-");
}

/// 1234567 -> "1,234,567".
std::string grouped(std::uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

void breakdown_row(Out& out, std::string_view key, units::Seconds t, units::Seconds whole, std::string_view note = {}) {
  fmt::format_to(std::back_inserter(out), "    {:<{}}{:>12} {:>7}{}\n", key, key_width - 4, units::to_string(t),
                 share(t, whole), note);
}

void write_breakdown(Out& out, const analysis::Summary& s) {
  fmt::format_to(std::back_inserter(out), "\n  {:<{}}{:>12} {:>7}\n", "time breakdown", key_width - 2, "time", "share");
  const auto& b = s.breakdown;
  breakdown_row(out, "compute", b.compute, s.iteration_time);
  breakdown_row(out, "  overlapped comm", b.overlapped_comm, s.iteration_time, "  (hidden under compute)");
  breakdown_row(out, "exposed comm", b.exposed_comm, s.iteration_time);
  for (const auto group : model::all_comm_groups)
    breakdown_row(out, fmt::format("  {}", model::to_string(group)), s.exposed_comm_by_group[analysis::index(group)],
                  s.iteration_time);
  breakdown_row(out, "idle", b.idle, s.iteration_time, "  (bubbles, waiting)");
  if (s.host_wait.value() > 0)
    breakdown_row(out, "waiting for host", s.host_wait, s.iteration_time, "  (kernels waiting for their launch)");
}

void write_efficiency(Out& out, const analysis::Summary& s) {
  out.push_back('\n');
  row(out, "comm fraction", percent(s.comm_fraction) + "  (comm busy / (compute + comm busy))");
  row(out, "exposed comm fraction", percent(s.exposed_comm_fraction) + "  (exposed comm / iteration time)");
  row(out, "model throughput", units::to_string(s.model_flops_per_device) + " per device");
  row(out, "MFU", percent(s.mfu));
}

struct ByteScale {
  double factor;
  std::string_view name;
};

ByteScale scale_for(units::Bytes largest) {
  if (largest.value() >= 1073741824.0) return {1073741824.0, "GiB"};
  if (largest.value() >= 1048576.0) return {1048576.0, "MiB"};
  return {1024.0, "KiB"};
}

void write_stage_table(Out& out, const model::MemoryReport& report, units::Bytes peak) {
  const ByteScale scale = scale_for(peak);
  fmt::format_to(std::back_inserter(out), "    per stage, in {}:\n", scale.name);
  fmt::format_to(std::back_inserter(out), "    {:>5} {:>6} {:>4}{:>9}{:>9}{:>9}{:>9}{:>9}{:>9}\n", "stage", "layers",
                 "mb", "weights", "grads", "optim", "activ", "buffers", "total");
  const auto b = [&](units::Bytes v) { return fmt::format("{:.2f}", v.value() / scale.factor); };
  for (const auto& st : report.stages) {
    const auto& m = st.breakdown;
    fmt::format_to(std::back_inserter(out), "    {:>5} {:>6} {:>4}{:>9}{:>9}{:>9}{:>9}{:>9}{:>9}\n", st.stage,
                   st.layers, st.micro_batches_in_flight, b(m.weights), b(m.gradients), b(m.optimizer_state),
                   b(m.activations), b(m.communication_buffers), b(m.total()));
  }
  out.append(std::string_view("    (mb: micro-batches of activations held at the peak)\n"));
}

void write_memory(Out& out, const analysis::MemorySummary& m) {
  out.push_back('\n');
  row(out, "memory per device",
      fmt::format("{} peak of {}: {}", units::to_string(m.peak), units::to_string(m.capacity),
                  m.fits ? "fits" : "DOES NOT FIT"));
  if (m.report.stages.size() > 1) write_stage_table(out, m.report, m.peak);
}

void write_plan_choice(Out& out, const analysis::Summary& s) {
  const auto& p = s.plan.parallelism;
  const auto& c = s.plan_choice;
  row(out, "plan search",
      fmt::format("{}: tensor {}{} x pipeline {} x data {}, {} virtual stages, micro-batch {}, recompute {}",
                  c.objective, p.tensor, p.context > 1 ? fmt::format(" x context {}", p.context) : "", p.pipeline,
                  p.data, p.virtual_stages, s.plan.micro_batch, model::to_string(s.plan.recompute)));
  row(out, "",
      fmt::format("{} of {} valid plans fit ({} tried); {} simulated to choose", c.fitting, c.valid, c.considered,
                  c.simulated));
}

/// "tensor in-network x96, data ring x4": which algorithm each kind's collectives ran.
std::string algorithm_line(const analysis::AlgorithmCounts& counts) {
  std::string line;
  for (const auto group : model::all_comm_groups)
    for (const auto& [algorithm, n] : counts[analysis::index(group)])
      line += fmt::format("{}{} {} x{}", line.empty() ? "" : ", ", model::to_string(group), algorithm, n);
  return line;
}

} // namespace

std::string summary_table(const analysis::Summary& s) {
  Out out;
  fmt::format_to(std::back_inserter(out), "twocs: {} on {}\n", s.workload_name, s.platform_name);
  row(out, "world size",
      fmt::format("{} devices (measured on device {})",
                  grouped(static_cast<std::uint64_t>(std::max<std::int64_t>(s.world_size, 0))), s.measured_device));
  if (s.plan_choice.objective != "none") write_plan_choice(out, s);
  row(out, "iteration time", units::to_string(s.iteration_time));
  write_breakdown(out, s);
  write_efficiency(out, s);
  write_memory(out, s.memory);
  out.push_back('\n');
  row(out, "simulated tasks", grouped(s.simulated_tasks));
  if (const std::string algorithms = algorithm_line(s.collective_algorithms); !algorithms.empty())
    row(out, "collectives", algorithms);
  if (s.simulated_devices > 0 && s.simulated_devices < s.world_size)
    row(out, "folded replicas",
        fmt::format("{} of {} devices simulated (the rest mirror them)", s.simulated_devices, s.world_size));
  row(out, "approximations", approximations_line(s.approximations));
  row(out, "wall time", units::to_string(s.wall_time));
  return fmt::to_string(out);
}

} // namespace twocs::report
