// The `figures:` list of a study file: which charts its report draws (docs/studies.md).
#include <array>
#include <string_view>

#include <fmt/format.h>

#include "study_reader.hpp"
#include "yaml_suggest.hpp"

namespace twocs::config {
namespace {

constexpr std::array<std::string_view, 3> figure_keys = {"x", "series", "metric"};
constexpr std::array<std::string_view, 12> metrics = {
    "iteration_time_s", "comm_fraction",       "exposed_comm_fraction",        "mfu",
    "comm_busy_s",      "breakdown_s.compute", "breakdown_s.exposed_comm",     "breakdown_s.overlapped_comm",
    "breakdown_s.idle", "memory.peak_bytes",   "model_flops_per_device_per_s", "host_wait_s"};
constexpr std::string_view figure_example = "{x: whatif.generations, series: model.name, metric: comm_fraction}";

std::string read_axis_name(const detail::Field& f, const std::vector<std::string>& axis_keys) {
  std::string name = detail::read_text(f);
  for (const std::string& key : axis_keys)
    if (key == name) return name;
  const std::vector<std::string_view> known(axis_keys.begin(), axis_keys.end());
  detail::fail_at(f.where(), f.path, fmt::format("{} '{}' is not an axis of the study", f.path, name),
                  fmt::format("{} (a figure's x and series are axis keys)", detail::suggest(name, known)));
}

} // namespace

std::span<const std::string_view> study_figure_metrics() { return metrics; }

namespace detail {

std::vector<StudyFigure> read_figures(const Field& field, const std::vector<std::string>& axis_keys) {
  std::vector<StudyFigure> figures;
  const std::vector<Field> items = read_list(field);
  if (items.empty())
    fail_at(field.where(), field.path, fmt::format("{} is an empty list", field.path),
            fmt::format("list the figures, e.g. figures: [{}], or remove the key", figure_example));
  for (const Field& item : items) {
    const MappingReader figure(item, figure_keys);
    StudyFigure out;
    out.x = read_axis_name(figure.required("x", "whatif.generations"), axis_keys);
    if (const auto series = figure.optional("series")) out.series = read_axis_name(*series, axis_keys);
    out.metric = std::string(metrics[read_choice(figure.required("metric", "comm_fraction"), metrics)]);
    figures.push_back(std::move(out));
  }
  return figures;
}

} // namespace detail
} // namespace twocs::config
