// A model whose layers alternate windowed and whole-prefix attention (model.full_attention_every)
// end to end: the lowering runs each layer at its own window.
#include <doctest/doctest.h>

#include <string>

#include "support/iteration_run.hpp"
#include "support/scenarios.hpp"

using namespace twocs;

namespace {

using testing::fused_single_plan;
using testing::windowed_gpt;

/// Device 0's forward FlashAttention kernel time in layer `layer`.
double flash_time(const testing::IterationRun& run, std::int32_t layer) {
  for (lowering::TaskId id = 0; id < run.graph.size(); ++id) {
    const auto& t = run.graph.task(id);
    if (!t.is_transfer() && t.layer == layer && t.pass == model::Pass::forward &&
        run.graph.label(t.label) == "attn.flash")
      return run.graph.kernel(id).duration.value();
  }
  FAIL("no attn.flash in layer " << layer);
  return 0;
}

} // namespace

TEST_CASE("alternating layers run their own attention: windowed kernels on even layers, whole ones on odd") {
  const auto run = testing::simulate_iteration(windowed_gpt(1024, 2), fused_single_plan(), 1);
  const auto local = testing::simulate_iteration(windowed_gpt(1024, 0), fused_single_plan(), 1);
  const auto whole = testing::simulate_iteration(windowed_gpt(0, 0), fused_single_plan(), 1);
  CHECK(flash_time(run, 0) == doctest::Approx(flash_time(local, 0)));
  CHECK(flash_time(run, 1) == doctest::Approx(flash_time(whole, 1)));
  CHECK(flash_time(run, 0) < flash_time(run, 1));
  const double t = run.summary.iteration_time.value();
  CHECK(t > local.summary.iteration_time.value());
  CHECK(t < whole.summary.iteration_time.value());
}
