#include "network_actions.hpp"

#include <cassert>
#include <stdexcept>
#include <string>
#include <vector>

#include <simgrid/kernel/resource/Action.hpp>
#include <simgrid/kernel/resource/Model.hpp>
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/s4u/Host.hpp>
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
#endif

NetworkActions::NetworkActions(const simgrid::s4u::Host* host) {
#ifdef TWOCS_NETWORK_ACTIONS
  if (host == nullptr) return;
  resource::NetworkModelIntf* network = host->get_englobing_zone()->get_network_model();
  // The model is both a Model and a NetworkModelIntf: a cross cast through its type information.
  model_ = dynamic_cast<resource::Model*>(network);
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

resource::Action* NetworkActions::next_finished() {
  if (model_ == nullptr) return nullptr;
  if (model_->extract_failed_action() != nullptr) throw std::runtime_error("a simulated transfer failed");
  return model_->extract_done_action();
}

void NetworkActions::release(resource::Action* action) { action->unref(); }

} // namespace twocs::engine::detail
