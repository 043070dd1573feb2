// The --trace output: Chrome trace-event JSON (loads in Perfetto and chrome://tracing), one
// process per device, one thread per stream, one complete ("X") event per simulated task, or per
// task of the devices and time window a TraceFilter keeps.
#pragma once

#include <optional>
#include <ostream>
#include <vector>

#include <twocs/engine/timeline.hpp>
#include <twocs/lowering/task_graph.hpp>
#include <twocs/units/quantity.hpp>

namespace twocs::report {

/// What a trace keeps (`--trace-devices`, `--trace-from`, `--trace-until`): a large run's full
/// trace (millions of events, a gigabyte) does not load in chrome://tracing.
struct TraceFilter {
  std::optional<std::vector<lowering::DeviceId>> devices; // sorted; none: every device
  units::Seconds from{0};                                 // events that end after this...
  std::optional<units::Seconds> until;                    // ...and start before this

  [[nodiscard]] bool keeps(lowering::DeviceId device) const;
  [[nodiscard]] bool keeps(const engine::TaskTiming& timing) const;
};

void write_chrome_trace(std::ostream& out, const lowering::TaskGraph& graph, const engine::Timeline& timeline,
                        const TraceFilter& filter = {});

} // namespace twocs::report
