#include "yaml_whatif.hpp"

#include <array>
#include <cmath>
#include <string_view>

#include <fmt/format.h>

namespace twocs::config::detail {
namespace {

constexpr std::array<std::string_view, 7> whatif_keys = {
    "compute_scale",        "memory_capacity_scale",   "memory_bandwidth_scale",
    "node_bandwidth_scale", "network_bandwidth_scale", "network_latency_scale",
    "generations"};

// Growth per two-year hardware generation, Gholami et al., "AI and Memory Wall", IEEE Micro
// 2024, Fig. 1: peak hardware FLOPS 3.0x / 2 years, DRAM bandwidth 1.6x / 2 years,
// interconnect bandwidth 1.4x / 2 years.
constexpr double flops_per_generation = 3.0;
constexpr double dram_bandwidth_per_generation = 1.6;
constexpr double interconnect_per_generation = 1.4;

struct Factors {
  double compute = 1, memory_capacity = 1, memory_bandwidth = 1, node_bandwidth = 1, network_bandwidth = 1,
         network_latency = 1;
};

double read_scale(const Field& f) {
  const double scale = read_real(f);
  if (!(scale > 0))
    fail_at(f.where(), f.path, fmt::format("{} must be a positive factor, got {}", f.path, scale),
            "give a factor such as 2 (twice as fast) or 0.5 (half)");
  return scale;
}

Factors read_factors(const Field& field) {
  const MappingReader w(field, whatif_keys);
  Factors x;
  if (const auto f = w.optional("compute_scale")) x.compute = read_scale(*f);
  if (const auto f = w.optional("memory_capacity_scale")) x.memory_capacity = read_scale(*f);
  if (const auto f = w.optional("memory_bandwidth_scale")) x.memory_bandwidth = read_scale(*f);
  if (const auto f = w.optional("node_bandwidth_scale")) x.node_bandwidth = read_scale(*f);
  if (const auto f = w.optional("network_bandwidth_scale")) x.network_bandwidth = read_scale(*f);
  if (const auto f = w.optional("network_latency_scale")) x.network_latency = read_scale(*f);
  if (const auto f = w.optional("generations")) {
    const double g = read_real_between(*f, 0, 20, "give the number of two-year hardware generations ahead, e.g. 2");
    x.compute *= std::pow(flops_per_generation, g);
    x.memory_bandwidth *= std::pow(dram_bandwidth_per_generation, g);
    x.node_bandwidth *= std::pow(interconnect_per_generation, g);
    x.network_bandwidth *= std::pow(interconnect_per_generation, g);
  }
  return x;
}

} // namespace

void apply_whatif(const Field& field, hardware::ClusterSpec& cluster) {
  const Factors x = read_factors(field);
  auto& device = cluster.device;
  hardware::scale_rates(device, x.compute, x.memory_bandwidth);
  // Measured kernel times describe today's device: a faster one keeps each kernel's measured
  // efficiency relative to the formula (its measured/formula ratio), as the paper's operator
  // models keep today's efficiencies for future devices (docs/input-formats.md, "What-ifs").
  device.kernels.measured_compute_scale *= x.compute;
  device.kernels.measured_memory_scale *= x.memory_bandwidth;
  device.memory *= x.memory_capacity;
  cluster.node.interconnect.bandwidth *= x.node_bandwidth;
  cluster.network.link.bandwidth *= x.network_bandwidth;
  cluster.network.fabric_bandwidth *= x.network_bandwidth; // switch-to-switch and torus links too
  cluster.network.link.latency *= x.network_latency;
}

} // namespace twocs::config::detail
