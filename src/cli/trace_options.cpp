#include "trace_options.hpp"
#include "whole_number.hpp"

#include <algorithm>

#include <fmt/format.h>

#include <twocs/error.hpp>
#include <twocs/units/format.hpp>
#include <twocs/units/parse.hpp>

namespace twocs::cli {
namespace {

[[noreturn]] void bad_devices(std::string_view text, std::string_view why) {
  throw InputError(fmt::format("--trace-devices: '{}' {}", text, why), "--trace-devices",
                   "list device ids and ranges separated by commas, e.g. --trace-devices 0,8-15");
}

lowering::DeviceId parse_id(std::string_view whole, std::string_view text) {
  const auto value = whole_number<lowering::DeviceId>(text);
  if (!value) bad_devices(whole, fmt::format("has '{}' where a device id belongs", text));
  return *value;
}

} // namespace

std::vector<lowering::DeviceId> parse_trace_devices(std::string_view text) {
  std::vector<lowering::DeviceId> devices;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, comma - start);
    const std::size_t dash = item.find('-');
    const lowering::DeviceId first = parse_id(text, item.substr(0, dash));
    const lowering::DeviceId last = dash == std::string_view::npos ? first : parse_id(text, item.substr(dash + 1));
    if (last < first) bad_devices(text, fmt::format("has the range '{}', which ends before it starts", item));
    if (last - first >= 1'000'000) bad_devices(text, fmt::format("has the range '{}', over a million devices", item));
    for (lowering::DeviceId d = first; d <= last; ++d) devices.push_back(d);
    start = comma + 1;
  }
  std::sort(devices.begin(), devices.end());
  devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
  return devices;
}

units::Seconds parse_trace_time(std::string_view flag, std::string_view text) {
  try {
    const units::Seconds t = units::parse_seconds(text);
    if (t.value() >= 0) return t;
  } catch (const units::UnitError& e) {
    throw InputError(fmt::format("{}: '{}': {}", flag, text, e.what()), std::string(flag),
                     fmt::format("write a time of the simulated iteration with its unit, e.g. {} 1.5s", flag));
  }
  throw InputError(fmt::format("{}: '{}' is before the iteration starts", flag, text), std::string(flag),
                   fmt::format("write a time from 0s, e.g. {} 1.5s", flag));
}

report::TraceFormat parse_trace_format(const std::filesystem::path& file) {
  if (const auto format = report::trace_format_of(file)) return *format;
  throw InputError(fmt::format("--trace: '{}' has no trace format's extension; it accepts {}", file.string(),
                               report::trace_extensions),
                   "--trace",
                   fmt::format("name the file by the format wanted, e.g. --trace {}.pftrace (Perfetto, the smallest) "
                               "or --trace {}.json",
                               file.stem().string(), file.stem().string()));
}

void check_trace_filter(const report::TraceFilter& filter, std::int64_t world_size) {
  if (filter.devices && !filter.devices->empty() && filter.devices->back() >= world_size)
    throw InputError(fmt::format("--trace-devices: device {} does not exist; the plan has {} devices (0 to {})",
                                 filter.devices->back(), world_size, world_size - 1),
                     "--trace-devices", fmt::format("list devices from 0 to {}", world_size - 1));
  if (filter.until && filter.until->value() <= filter.from.value())
    throw InputError(fmt::format("--trace-until ({}) is not after --trace-from ({})", units::to_string(*filter.until),
                                 units::to_string(filter.from)),
                     "--trace-until", "give a window that ends after it starts, e.g. --trace-from 1s --trace-until 2s");
}

std::string device_ranges(const std::vector<lowering::DeviceId>& devices) {
  std::string text;
  for (std::size_t i = 0; i < devices.size();) {
    std::size_t j = i;
    while (j + 1 < devices.size() && devices[j + 1] == devices[j] + 1) ++j;
    if (!text.empty()) text += ", ";
    text += j == i ? fmt::format("{}", devices[i]) : fmt::format("{}-{}", devices[i], devices[j]);
    i = j + 1;
  }
  return text;
}

std::vector<lowering::DeviceId> mirrored_trace_devices(const report::TraceFilter& filter,
                                                       const lowering::TaskGraph& graph) {
  if (!filter.devices) return {};
  std::vector<bool> simulated(static_cast<std::size_t>(graph.device_count()), false);
  for (std::size_t id = 0; id < graph.size(); ++id)
    simulated[static_cast<std::size_t>(graph.task(static_cast<lowering::TaskId>(id)).device)] = true;
  std::vector<lowering::DeviceId> mirrored;
  for (const lowering::DeviceId d : *filter.devices)
    if (d < graph.device_count() && !simulated[static_cast<std::size_t>(d)]) mirrored.push_back(d);
  return mirrored;
}

} // namespace twocs::cli
