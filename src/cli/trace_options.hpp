// Private: `twocs run --trace-devices/--trace-from/--trace-until`, what the Chrome trace keeps.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <twocs/lowering/task_graph.hpp>
#include <twocs/report/chrome_trace.hpp>
#include <twocs/report/trace_format.hpp>

namespace twocs::cli {

/// "0,8-15,32": device ids and inclusive ranges, sorted and without repeats. Throws InputError
/// naming --trace-devices, what it accepts and the fix.
[[nodiscard]] std::vector<lowering::DeviceId> parse_trace_devices(std::string_view text);

/// A time such as "1.5s" or "200ms" for `flag` (--trace-from, --trace-until); throws InputError.
[[nodiscard]] units::Seconds parse_trace_time(std::string_view flag, std::string_view text);

/// The format `file` (--trace) asks for by its extension; throws InputError naming --trace, the
/// extensions it accepts and the fix.
[[nodiscard]] report::TraceFormat parse_trace_format(const std::filesystem::path& file);

/// Checks the filter against the plan before anything is simulated: devices below the world
/// size, a window that is not empty. Throws InputError.
void check_trace_filter(const report::TraceFilter& filter, std::int64_t world_size);

/// "1-7, 9, 33-40": sorted ids with runs written as ranges.
[[nodiscard]] std::string device_ranges(const std::vector<lowering::DeviceId>& devices);

/// The requested devices folding mirrors instead of simulating (their trace would be empty).
[[nodiscard]] std::vector<lowering::DeviceId> mirrored_trace_devices(const report::TraceFilter& filter,
                                                                     const lowering::TaskGraph& graph);

} // namespace twocs::cli
