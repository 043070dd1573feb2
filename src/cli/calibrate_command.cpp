#include "calibrate_command.hpp"

#include <fmt/format.h>

#include <twocs/cost/calibration.hpp>
#include <twocs/config/operator_model_fragment.hpp>
#include <twocs/fileio/output_file.hpp>
#include <twocs/config/profile_csv.hpp>
#include <twocs/config/scenario_loader.hpp>
#include <twocs/units/format.hpp>

namespace twocs::cli {
namespace {

std::string shape_text(const hardware::KernelMeasurement& m) {
  if (m.gemm) {
    const auto& g = *m.gemm;
    return g.batch > 1 ? fmt::format("{}x{}x{} x{}", g.m, g.n, g.k, g.batch) : fmt::format("{}x{}x{}", g.m, g.n, g.k);
  }
  return units::to_string(m.bytes);
}

void print_parameters(std::ostream& out, const hardware::DeviceSpec& before, const cost::CalibrationResult& r) {
  const auto& after = r.device;
  out << fmt::format("  {:<22} {:>10} {:>10}\n", "parameter", "before", "fitted");
  const auto row = [&](const char* name, const std::string& a, const std::string& b, bool fitted) {
    out << fmt::format("  {:<22} {:>10} {:>10}{}\n", name, a, b, fitted ? "" : "  (not informed: kept)");
  };
  row("gemm_efficiency", fmt::format("{:.4g}", before.roofline.gemm_efficiency),
      fmt::format("{:.4g}", after.roofline.gemm_efficiency), r.fitted_gemm);
  row("gemm_k_half", fmt::format("{:.4g}", before.kernels.gemm_k_half),
      fmt::format("{:.4g}", after.kernels.gemm_k_half), r.fitted_gemm);
  row("memory_efficiency", fmt::format("{:.4g}", before.roofline.memory_efficiency),
      fmt::format("{:.4g}", after.roofline.memory_efficiency), r.fitted_memory);
  row("kernel_overhead", units::to_string(before.roofline.kernel_overhead),
      units::to_string(after.roofline.kernel_overhead), true);
}

void print_kernels(std::ostream& out, const std::vector<hardware::KernelMeasurement>& rows,
                   const std::vector<units::Seconds>& predicted) {
  out << fmt::format("\n  {:<24} {:<13} {:<5} {:<22} {:>11} {:>11} {:>8}\n", "kernel", "op", "dtype", "shape",
                     "measured", "predicted", "error");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& m = rows[i];
    out << fmt::format("  {:<24} {:<13} {:<5} {:<22} {:>11} {:>11} {:>+7.1f}%\n", m.name.empty() ? "-" : m.name,
                       model::to_string(m.kind), model::to_string(m.dtype), shape_text(m), units::to_string(m.time),
                       units::to_string(predicted[i]), 100.0 * (predicted[i] / m.time - 1.0));
  }
}

void print_errors(std::ostream& out, const cost::FitErrors& errors) {
  out << fmt::format("\n  {:<24} {:>8} {:>12} {:>10}\n", "error by op", "kernels", "mean |err|", "max |err|");
  for (const auto& [kind, s] : errors.by_kind)
    out << fmt::format("  {:<24} {:>8} {:>11.1f}% {:>9.1f}%\n", model::to_string(kind), s.count, s.mean_abs_percent,
                       s.max_abs_percent);
  out << fmt::format("  {:<24} {:>8} {:>11.1f}% {:>9.1f}%\n", "overall", errors.overall.count,
                     errors.overall.mean_abs_percent, errors.overall.max_abs_percent);
}

} // namespace

CLI::App* add_calibrate_command(CLI::App& app, CalibrateOptions& o) {
  auto* c = app.add_subcommand("calibrate", "Fit a device's operator-model parameters to measured kernel times");
  c->add_option("profile", o.profile, "Profile CSV: op,shape,dtype,measured_time[,name] (scripts/profile_operators.py)")
      ->required();
  c->add_option("--platform", o.platform, "Platform YAML whose device to start from; default: the embedded DGX A100");
  c->add_option("--set", o.overrides, "Override a key of that platform, e.g. device.memory_bandwidth=3.35TB/s")
      ->take_all()
      ->allow_extra_args(false);
  c->add_option("--device-name", o.device_name, "Name the device in the output fragment");
  c->add_option("--output,-o", o.output, "Write the fitted parameters as a platform fragment (YAML) to FILE");
  c->add_flag("--with-table", o.with_table,
              "Also write the measured times into the fragment (they then take "
              "precedence over the formulas)");
  return c;
}

void run_calibrate(const CalibrateOptions& options, std::ostream& out) {
  const config::InputText platform = options.platform ? config::read_input(*options.platform) : config::embedded_default_platform();
  hardware::DeviceSpec base = config::parse_platform(platform, options.overrides).device;
  if (options.device_name) base.name = *options.device_name;
  const config::InputText profile = config::read_input(options.profile);
  const auto rows = config::parse_profile_csv(profile);
  const cost::CalibrationResult result = cost::calibrate(base, rows);
  const cost::FitErrors errors = cost::fit_errors(rows, result.predicted);

  out << fmt::format("twocs calibrate: {} kernels from {} on {} (starting from {})\n\n", rows.size(), profile.name,
                     base.name, platform.name);
  print_parameters(out, base, result);
  print_kernels(out, rows, result.predicted);
  print_errors(out, errors);
  if (!options.output) return;
  hardware::DeviceSpec fitted = result.device;
  if (options.with_table) fitted.kernels.measured = rows;
  config::FragmentOptions fragment;
  fragment.comments = {
      fmt::format("Operator-model parameters of {} fitted by `twocs calibrate` to {}", base.name, profile.name),
      fmt::format("({} kernels; mean |error| {:.1f}%, max {:.1f}%), starting from {}.", rows.size(),
                  errors.overall.mean_abs_percent, errors.overall.max_abs_percent, platform.name),
      "Replace device.operator_model of a platform file with these keys (docs/operator-models.md)."};
  fragment.device_name = options.device_name;
  fragment.with_measurements = options.with_table;
  fileio::write_file_atomically(*options.output, config::operator_model_fragment(fitted, fragment));
  out << fmt::format("\nwrote {}\n", options.output->string());
}

} // namespace twocs::cli
