// training.fp8_params: a sharded optimizer gathers the linear layers' weights in FP8 (1 byte) and
// the rest (norms, replicated biases, embeddings) in 16 bits.
#include <doctest/doctest.h>

#include <string_view>

#include <twocs/cost/roofline.hpp>
#include <twocs/lowering/lower_iteration.hpp>
#include <twocs/model/parameters.hpp>

#include "support/scenarios.hpp"

using namespace twocs;
using namespace twocs::lowering;

namespace {

double bytes_sent_by_0(const TaskGraph& g, std::string_view label) {
  double total = 0;
  for (TaskId id = 0; id < g.size(); ++id) {
    const Task& t = g.task(id);
    if (t.is_transfer() && t.device == 0 && g.label(t.label) == label) total += g.transfer(id).bytes.value();
  }
  return total;
}

} // namespace

TEST_CASE("FP8 primary weights halve the linear layers' share of the sharded optimizer's and ZeRO-3's gathers") {
  const auto m = testing::gpt(4, 256, 8, 128, 1024);
  auto device = testing::a100();
  device.peak_flops[model::Dtype::fp8] = units::FlopRate(624e12); // an FP8-capable device
  const cost::RooflineCostModel cost(device);
  constexpr double d = 4;
  const double ring = (d - 1) / d;
  const auto counts = model::count_parameters(m, 1);
  const double all = static_cast<double>(counts.total(m.layers));
  const double linear = static_cast<double>(counts.linear_range(0, m.layers));
  auto plan = testing::plan_of(1, 1, 4, 2);
  plan.dtype = model::Dtype::fp8;
  plan.optimizer.sharding = model::OptimizerSharding::optimizer;
  const double bf16_gather = bytes_sent_by_0(lower_iteration(m, plan, cost), "params.all_gather");
  CHECK(bf16_gather == doctest::Approx(ring * 2 * all));
  plan.fp8_params = true;
  CHECK(bytes_sent_by_0(lower_iteration(m, plan, cost), "params.all_gather") ==
        doctest::Approx(ring * (2 * (all - linear) + linear)));
  // ZeRO-3 / FSDP: each layer, forward and backward of 2 micro-batches, in FP8 where linear.
  plan.optimizer.sharding = model::OptimizerSharding::full;
  const double layer = static_cast<double>(counts.per_layer);
  const double layer_linear = static_cast<double>(counts.linear_range(0, 1));
  CHECK(bytes_sent_by_0(lower_iteration(m, plan, cost), "params.all_gather.layer") ==
        doctest::Approx(2 * 4 * 2 * ring * (2 * (layer - layer_linear) + layer_linear)));
}
