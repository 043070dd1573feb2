// Instantiates a platform::Topology as SimGrid netzones, hosts and links (private to the engine
// layer; docs/platform-model.md describes the structure).
#pragma once

#include <vector>

#include <twocs/platform/topology.hpp>

namespace simgrid::s4u {
class Host;
} // namespace simgrid::s4u

namespace twocs::engine::detail {

/// Speed of every host. A host runs one "flop" per nanosecond, so an Exec of a task lasting d
/// seconds has an amount of d * host_speed and takes exactly d on an otherwise idle host.
inline constexpr double host_speed = 1e9;

/// Speeds of a host's power states: pstate 0 runs at host_speed; with compute-communication
/// interference, pstate 1 runs at host_speed / (1 + compute_slowdown) and is the state of a device
/// while a transfer of its own is in flight (comm_interference.hpp).
/// Speed variation is not a power state: it stretches each kernel by its clock share (the
/// frontier, device_slowdowns), so that memory-bound kernels and overheads keep their time.
[[nodiscard]] std::vector<double> pstate_speeds(const hardware::CommInterference& interference);

/// The clock slowdown of each device (hardware/speed_variation.hpp): its own draw. Folded (`computing`
/// leaves devices out: they compute nothing), a simulated device stands for its replicas, which a synchronous step
/// waits for, and they for every other device through the data-parallel and pipeline
/// collectives: every simulated device gets the expected largest slowdown of all the topology's
/// devices, which no seed changes (docs/simulation.md, "Speed variation").
[[nodiscard]] std::vector<double> device_slowdowns(const platform::Topology& topology,
                                                   const std::vector<bool>& computing);

/// Builds the platform in the current SimGrid engine (which must have no platform yet) and
/// returns one host per device of the topology, indexed by device. With `used` (one flag per
/// device), only the nodes holding a used device get a zone and hosts; the others stay bare
/// routers of the fabric and their entries are null. SimGrid 3.32 makes each zone cost O(hosts)
/// (name lookups and sealing walk every zone), so this keeps large, folded runs fast.
[[nodiscard]] std::vector<simgrid::s4u::Host*> build_platform(const platform::Topology& topology,
                                                              const std::vector<bool>& used = {});

} // namespace twocs::engine::detail
