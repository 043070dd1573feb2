#include "network_actions.hpp"

#include <algorithm>
#include <cassert>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

#include <simgrid/kernel/resource/Action.hpp>
#include <simgrid/kernel/resource/Model.hpp>
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <simgrid/version.h>

#if SIMGRID_VERSION_MAJOR == 3 && SIMGRID_VERSION_MINOR == 32
#define TWOCS_NETWORK_ACTIONS 1
#endif

namespace twocs::engine::detail {

namespace resource = simgrid::kernel::resource;

#ifdef TWOCS_NETWORK_ACTIONS
/// The head of SimGrid 3.32's `kernel::resource::NetworkModel` (src/kernel/resource/NetworkModel.hpp
/// of v3.32): after Model's virtual functions, its first three new ones, in that order. Only
/// `communicate` is called, through the vtable slot this declaration gives it; never instantiated.
/// Not in an anonymous namespace: there the compiler sees no overrider and calls the pure function.
class NetworkModelHead : public resource::Model, public resource::NetworkModelIntf {
public:
  virtual void* create_link(const std::string& name, const std::vector<double>& bandwidths) = 0;
  virtual void* create_wifi_link(const std::string& name, const std::vector<double>& bandwidths) = 0;
  virtual resource::Action* communicate(simgrid::s4u::Host* src, simgrid::s4u::Host* dst, double size, double rate) = 0;
};

/// The head of SimGrid 3.32's `kernel::resource::NetworkAction` (src/kernel/resource/NetworkModel.hpp
/// of v3.32): its members after Action's, in that order. CM02 keeps a transfer's route latency
/// here, the penalty it would give the transfer's max-min variable once the latency is paid (the
/// engine pays it, so share_as applies it), not in Action's own (which stays 1).
/// Never instantiated: a started network action is read through it.
class NetworkActionHead : public resource::Action {
public:
  simgrid::s4u::Host* source;      // NetworkAction::src_ (a reference: one pointer)
  simgrid::s4u::Host* destination; // NetworkAction::dst_
  double latency;                  // NetworkAction::latency_
  double current_latency;          // NetworkAction::lat_current_
  double sharing_penalty;          // NetworkAction::sharing_penalty_
};
#endif

NetworkActions::NetworkActions(const simgrid::s4u::Host* host) {
#ifdef TWOCS_NETWORK_ACTIONS
  if (host == nullptr) return;
  resource::NetworkModelIntf* network = host->get_englobing_zone()->get_network_model();
  // The model is both a Model and a NetworkModelIntf: a cross cast through its type information.
  model_ = dynamic_cast<resource::Model*>(network);
  // The engine pays every transfer's route latency itself (a timer before start()), so that CM02
  // starts each action with its max-min variable enabled. Left to CM02, an action waits out its
  // latency disabled and is enabled when it is paid; 3.32's selective update then re-solves only
  // the constraints reachable from the variable's first link (lmm::System::enable_var ->
  // update_modified_cnst_set_from_variable), so several actions enabled at one date on a shared
  // first link can miss their other links' constraints: unequal shares for symmetric flows that
  // depend on the order of events (docs/errors.md, "Invariants", seed 23's scenario 8125).
  network->set_lat_factor_cb([](double, const simgrid::s4u::Host*, const simgrid::s4u::Host*,
                                const std::vector<simgrid::s4u::Link*>&,
                                const std::unordered_set<simgrid::s4u::NetZone*>&) { return 0.0; });
#else
  (void)host;
#endif
}

// The model's dynamic type is SimGrid's network model, not NetworkModelHead: UBSan's vptr check
// (the sanitizer build, docs/errors.md) would reject the call it relies on.
__attribute__((no_sanitize("vptr"))) resource::Action*
NetworkActions::start(simgrid::s4u::Host* src, simgrid::s4u::Host* dst, std::uint64_t bytes) {
#ifdef TWOCS_NETWORK_ACTIONS
  assert(model_ != nullptr);
  // What CommImpl::start does for a host-to-host comm, without the activity: no rate bound (-1).
  return static_cast<NetworkModelHead*>(model_)->communicate(src, dst, static_cast<double>(bytes), -1.0);
#else
  (void)src;
  (void)dst;
  (void)bytes;
  throw std::logic_error("network actions need SimGrid 3.32");
#endif
}

// A started action is read through NetworkActionHead, not its dynamic type: see start() on UBSan.
__attribute__((no_sanitize("vptr"))) void NetworkActions::share_as(resource::Action* action, std::uint32_t flows) {
  double penalty = std::max<std::uint32_t>(flows, 1);
#ifdef TWOCS_NETWORK_ACTIONS
  // CM02 weighs a flow by its route latency (its sharing penalty, NetworkCm02Model::communicate of
  // v3.32); with the latency factor 0 the variable starts enabled with penalty 1 instead, so the
  // route latency is applied here, as CM02 would have applied it once the latency was paid.
  const double route = static_cast<NetworkActionHead*>(action)->sharing_penalty;
  if (route > 0) penalty *= route;
#endif
  if (penalty != 1.0) action->set_sharing_penalty(penalty);
}

resource::Action* NetworkActions::next_finished() {
  if (model_ == nullptr) return nullptr;
  if (model_->extract_failed_action() != nullptr) throw std::runtime_error("a simulated transfer failed");
  return model_->extract_done_action();
}

void NetworkActions::release(resource::Action* action) { action->unref(); }

} // namespace twocs::engine::detail
