#include "sweep_loop.hpp"

#include <chrono>
#include <thread>

namespace twocs::sweep::detail {

bool run_loop(const config::Study& study, const SweepOptions& options, Transport& transport, StopCheck stop) {
  ScenarioPool pool(study, options);
  while (true) {
    if (stop() || transport.stop_requested()) {
      pool.kill_all();
      transport.stopping();
      return true;
    }
    transport.serve();
    while (pool.has_room()) {
      const std::optional<std::size_t> index = transport.take();
      if (!index) break;
      pool.start(*index);
    }
    if (pool.empty() && transport.drained()) return false;
    if (std::optional<FinishedScenario> done = pool.reap()) {
      if (!stop()) transport.finished(*done); // else killed by the same Ctrl-C: not a result, rerun on resume
      continue;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

} // namespace twocs::sweep::detail
