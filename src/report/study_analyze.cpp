#include <twocs/report/study_analyze.hpp>

#include <array>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <twocs/units/format.hpp>

namespace twocs::report {
namespace {

/// Indexed by model::CommGroup; expert and context were added after the first three.
constexpr std::array<std::string_view, model::comm_group_count> groups = {"tensor", "pipeline", "data", "expert",
                                                                          "context"};
constexpr std::size_t first_groups = 3; // the columns every earlier CSV has, in their order

nlohmann::json work_json(const projection::Work& w) {
  nlohmann::json j;
  j["flops"] = w.flops.value();
  j["compute_s"] = w.compute.value();
  for (std::size_t g = 0; g < groups.size(); ++g) {
    j["comm_bytes"][std::string(groups[g])] = w.comm_bytes[g].value();
    j["comm_s"][std::string(groups[g])] = w.comm_time[g].value();
  }
  const double bytes = w.total_bytes().value();
  j["flops_per_byte"] = bytes > 0 ? w.flops.value() / bytes : 0.0;
  return j;
}

void work_values(std::vector<std::string>& out, const projection::Work& w) {
  out.push_back(fmt::format("{}", w.flops.value()));
  out.push_back(fmt::format("{}", w.compute.value()));
  for (std::size_t g = 0; g < first_groups; ++g) out.push_back(fmt::format("{}", w.comm_bytes[g].value()));
  for (std::size_t g = 0; g < first_groups; ++g) out.push_back(fmt::format("{}", w.comm_time[g].value()));
  for (std::size_t g = first_groups; g < groups.size(); ++g) {
    out.push_back(fmt::format("{}", w.comm_bytes[g].value()));
    out.push_back(fmt::format("{}", w.comm_time[g].value()));
  }
}

void work_columns(std::vector<std::string>& out, std::string_view part) {
  out.push_back(fmt::format("{}.flops", part));
  out.push_back(fmt::format("{}.compute_s", part));
  for (std::size_t g = 0; g < first_groups; ++g) out.push_back(fmt::format("{}.comm_bytes.{}", part, groups[g]));
  for (std::size_t g = 0; g < first_groups; ++g) out.push_back(fmt::format("{}.comm_s.{}", part, groups[g]));
  for (std::size_t g = first_groups; g < groups.size(); ++g) {
    out.push_back(fmt::format("{}.comm_bytes.{}", part, groups[g]));
    out.push_back(fmt::format("{}.comm_s.{}", part, groups[g]));
  }
}

void table_rows(std::string& out, std::string_view title, const projection::Work& w) {
  out += fmt::format("{}\n  FLOPs {:>14.4g}   compute {:>12}\n", title, w.flops.value(), units::to_string(w.compute));
  for (std::size_t g = 0; g < groups.size(); ++g)
    if (g < first_groups || w.comm_bytes[g].value() > 0) // expert and context only when the plan has them
      out += fmt::format("  {:<8} comm {:>12}   {:>12}\n", groups[g], units::to_string(w.comm_bytes[g]),
                         units::to_string(w.comm_time[g]));
  const double bytes = w.total_bytes().value();
  out += fmt::format("  FLOPs per communicated byte: {}\n",
                     bytes > 0 ? fmt::format("{:.1f}", w.flops.value() / bytes) : std::string("no communication"));
}

} // namespace

std::string projection_table(const projection::Projection& p) {
  std::string out = fmt::format("Closed form, one device ({} layers, {} micro-batches); no simulation\n",
                                p.layers_per_device, p.micro_batches);
  table_rows(out, "Per layer and micro-batch (forward + backward):", p.layer);
  table_rows(out, "Per iteration:", p.iteration);
  out += fmt::format("Iteration time, no overlap:   {}\n", units::to_string(p.time_no_overlap));
  out += fmt::format("Iteration time, full overlap: {}\n", units::to_string(p.time_full_overlap));
  out += fmt::format("Communication / compute time: {:.3f} (communication {:.1f}% of the time without overlap)\n",
                     p.comm_to_compute_time, 100 * p.comm_fraction_no_overlap);
  return out;
}

std::string projection_json(const projection::Projection& p) {
  nlohmann::json j;
  j["layers_per_device"] = p.layers_per_device;
  j["micro_batches"] = p.micro_batches;
  j["layer"] = work_json(p.layer);
  j["iteration"] = work_json(p.iteration);
  j["time_no_overlap_s"] = p.time_no_overlap.value();
  j["time_full_overlap_s"] = p.time_full_overlap.value();
  j["comm_to_compute_time"] = p.comm_to_compute_time;
  j["comm_fraction_no_overlap"] = p.comm_fraction_no_overlap;
  return j.dump(2) + "\n";
}

std::vector<std::string> projection_columns() {
  std::vector<std::string> out;
  work_columns(out, "layer");
  work_columns(out, "iteration");
  for (auto c : {"flops_per_byte", "time_no_overlap_s", "time_full_overlap_s", "comm_to_compute_time",
                 "comm_fraction_no_overlap"})
    out.emplace_back(c);
  return out;
}

std::vector<std::string> projection_values(const projection::Projection& p) {
  std::vector<std::string> out;
  work_values(out, p.layer);
  work_values(out, p.iteration);
  for (double v : {p.flops_per_byte, p.time_no_overlap.value(), p.time_full_overlap.value(), p.comm_to_compute_time,
                   p.comm_fraction_no_overlap})
    out.push_back(fmt::format("{}", v));
  return out;
}

} // namespace twocs::report
