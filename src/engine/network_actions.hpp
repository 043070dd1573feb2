// Transfers as network actions of SimGrid's network model, without an s4u activity (private to
// the engine layer).
//
// SimGrid 3.32 detaches every host-to-host s4u::Comm (`Comm::sendto_init`) at creation, which puts
// it on maestro's list of activities, and `CommImpl::finish` removes it with a scan of the whole
// list (`activities_.remove(this)`, src/kernel/activity/CommImpl.cpp of v3.32): each completion
// costs as many steps as transfers are alive (95% of a 4096-rank collective's time). Started
// here, a transfer is only the network model's action (what the s4u::Comm would have wrapped,
// `NetworkModel::communicate`): the same max-min sharing, latency and bandwidth, no list. The
// engine collects finished actions itself, right after the model updates them
// (`Engine::on_time_advance_cb`, before SimGrid would skip them as actions of no activity).
//
// `communicate` is declared in SimGrid's private headers only; `available()` is true for 3.32,
// whose class layout this file relies on, and the engine falls back to s4u comms otherwise.
#pragma once

#include <cstdint>

namespace simgrid::s4u {
class Host;
} // namespace simgrid::s4u
namespace simgrid::kernel::resource {
class Action;
class Model;
} // namespace simgrid::kernel::resource

namespace twocs::engine::detail {

class NetworkActions {
public:
  /// Binds to the network model of `host`'s zone, when the SimGrid version allows it.
  explicit NetworkActions(const simgrid::s4u::Host* host);

  [[nodiscard]] bool available() const { return model_ != nullptr; }

  /// Starts moving `bytes` from `src` to `dst` now; the caller owns the returned action until
  /// it comes back from next_finished() and is released.
  simgrid::kernel::resource::Action* start(simgrid::s4u::Host* src, simgrid::s4u::Host* dst, std::uint64_t bytes);

  /// Gives `action`, just started, `flows` times the share of a link that one transfer takes
  /// against others (max-min sharing weighs a flow by 1 / its sharing penalty), so that a
  /// collective lowered into `flows` concurrent transfers per rank claims one share, as one NCCL
  /// kernel does (docs/network.md, "Concurrent collectives").
  static void share_as(simgrid::kernel::resource::Action* action, std::uint32_t flows);

  /// A finished action, in the order the model finished them, or nullptr when none is left.
  /// Throws std::runtime_error when an action failed (no link of ours ever fails).
  [[nodiscard]] simgrid::kernel::resource::Action* next_finished();

  /// Frees a finished action.
  static void release(simgrid::kernel::resource::Action* action);

private:
  simgrid::kernel::resource::Model* model_ = nullptr;
};

} // namespace twocs::engine::detail
