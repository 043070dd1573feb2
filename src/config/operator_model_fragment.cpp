#include <twocs/config/operator_model_fragment.hpp>

#include <span>

#include <fmt/format.h>

#include <twocs/fileio/text_escape.hpp>

#include "kernel_shape.hpp"

namespace twocs::config {
namespace {

std::string quoted(std::string_view text) { return fileio::yaml_double_quoted(text); }

std::string number(double v) { return fmt::format("{:.6g}", v); }
std::string microseconds(units::Seconds t) { return fmt::format("{}us", number(t.value() * 1e6)); }

std::string tiles(std::span<const hardware::GemmTile> list) {
  std::string out = "[";
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto& t = list[i];
    out += fmt::format("{}{{m: {}, n: {}, k: {}", i ? ", " : "", t.m, t.n, t.k);
    if (t.efficiency != 1.0) out += fmt::format(", efficiency: {}", number(t.efficiency));
    out += "}";
  }
  return out + "]";
}

void write_measurements(std::string& out, std::span<const hardware::KernelMeasurement> rows) {
  out += "    measured:\n";
  for (const auto& m : rows) {
    out += fmt::format("      - {{op: {}, shape: {}, dtype: {}, time: {}", model::to_string(m.kind),
                       quoted(detail::format_kernel_shape(m)), model::to_string(m.dtype), microseconds(m.time));
    if (!m.name.empty()) out += fmt::format(", name: {}", quoted(m.name));
    if (!m.kernel.empty()) out += fmt::format(", kernel: {}", quoted(m.kernel));
    if (m.accumulation != hardware::Fp8Accumulation::any)
      out += fmt::format(", accumulation: {}", m.accumulation == hardware::Fp8Accumulation::split ? "split" : "fast");
    if (m.scaling == hardware::Fp8Scaling::blockwise) out += ", scaling: blockwise";
    out += "}\n";
  }
}

} // namespace

std::string operator_model_fragment(const hardware::DeviceSpec& device, const FragmentOptions& options) {
  std::string out;
  for (const auto& line : options.comments) out += fmt::format("# {}\n", line);
  out += "device:\n";
  if (options.device_name) out += fmt::format("  name: {}\n", quoted(*options.device_name));
  out += "  operator_model:\n";
  const auto& r = device.roofline;
  const auto& k = device.kernels;
  out += fmt::format("    gemm_efficiency: {}\n", number(r.gemm_efficiency));
  if (r.fp8_gemm_efficiency) out += fmt::format("    fp8_gemm_efficiency: {}\n", number(*r.fp8_gemm_efficiency));
  out += fmt::format("    memory_efficiency: {}\n", number(r.memory_efficiency));
  out += fmt::format("    kernel_overhead: {}\n", microseconds(r.kernel_overhead));
  if (k.compute_units > 0) out += fmt::format("    compute_units: {}\n", k.compute_units);
  if (!k.gemm_tiles.empty()) out += fmt::format("    gemm_tiles: {}\n", tiles(k.gemm_tiles));
  out += fmt::format("    gemm_k_half: {}\n", number(k.gemm_k_half));
  if (!k.matrix_dtypes.empty()) {
    std::vector<std::string_view> names;
    for (auto d : k.matrix_dtypes) names.push_back(model::to_string(d));
    out += fmt::format("    matrix_dtypes: [{}]\n", fmt::join(names, ", "));
  }
  if (!k.vector_tiles.empty()) out += fmt::format("    vector_tiles: {}\n", tiles(k.vector_tiles));
  if (k.vector_gemm_efficiency)
    out += fmt::format("    vector_gemm_efficiency: {}\n", number(*k.vector_gemm_efficiency));
  if (k.vector_flops) out += fmt::format("    vector_flops: {}TFLOP/s\n", number(k.vector_flops->value() / 1e12));
  if (k.fp8_any_layout) out += "    fp8_gemm_layouts: any\n";
  if (options.with_measurements && !k.measured.empty()) write_measurements(out, k.measured);
  return out;
}

} // namespace twocs::config
