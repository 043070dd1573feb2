// Runs a task DAG in a SimGrid session with a lazy frontier (private to the engine layer).
#pragma once

#include <vector>

#include <twocs/engine/simulate.hpp>

#include "engine_session.hpp"

namespace simgrid::s4u {
class Host;
} // namespace simgrid::s4u

namespace twocs::engine::detail {

/// Simulates `graph` with device i on hosts[i]. A transfer becomes a SimGrid activity only when
/// its last predecessor finishes: SimGrid 3.32 scans every live activity at each completion, so
/// handing it the whole DAG up front costs quadratic time (docs/simgrid-notes.md). Transfers are
/// started as network actions without an s4u activity where the SimGrid version allows it
/// (network_actions.hpp), which avoids that scan; a coarse collective's transfer first waits for
/// the latencies of the steps it stands for (lowering/collective_lowering.hpp). Kernels run
/// outside SimGrid's models (device_compute.hpp). Tasks that cost nothing (zero duration, payload
/// of no bytes at all) complete at once; a fraction of a byte moves one. Compute kernels slow down while their device
/// has a transfer in flight (`interference`, comm_interference.hpp). Reports progress through options.on_progress.
/// Throws SimulationError when some task never ran. `slowdowns`: each device's clock slowdown (platform_builder.hpp,
/// device_slowdowns); a kernel takes its duration x (1 + (slowdown - 1) x its clock share).
[[nodiscard]] Timeline run_frontier(const lowering::TaskGraph& graph, const std::vector<simgrid::s4u::Host*>& hosts,
                                    EngineSession& session, const hardware::CommInterference& interference,
                                    std::vector<double> slowdowns, EngineStats* stats,
                                    const EngineOptions& options = {});

} // namespace twocs::engine::detail
