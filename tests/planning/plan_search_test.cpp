// The plan search against closed forms computed here, against its own contract (every
// candidate divides and fits, `fastest` returns the best it simulated) and against a brute
// force that simulates every plan of a small case.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include <twocs/analysis/summarize.hpp>
#include <twocs/config/scenario_loader.hpp>
#include <twocs/cost/make_cost_model.hpp>
#include <twocs/engine/simulate.hpp>
#include <twocs/error.hpp>
#include <twocs/lowering/lower_iteration.hpp>
#include <twocs/model/memory.hpp>
#include <twocs/planning/plan_search.hpp>
#include <twocs/platform/topology.hpp>

using namespace twocs;

namespace {

config::Scenario scenario(const std::vector<std::string>& overrides) {
  return config::load_scenario(config::embedded_default_workload(), config::embedded_default_platform(), overrides);
}

units::Seconds simulated_time(const config::Scenario& s, const model::TrainingPlan& plan,
                              const cost::OperatorCostModel& cost) {
  const auto graph = lowering::lower_iteration(s.workload.model, plan, cost);
  const auto topology = platform::build_topology(s.cluster, plan.world_size());
  return engine::simulate(graph, topology).makespan;
}

planning::SearchResult search(const config::Scenario& s, planning::Objective objective, std::int64_t candidates,
                              const planning::Simulate& simulate) {
  const auto cost = cost::make_cost_model(s.cluster.device);
  return planning::search_plan(s.workload.model, s.workload.plan, s.cluster, *cost, objective, candidates, simulate);
}

const planning::Simulate no_simulation = [](const model::TrainingPlan&, std::string&) -> std::optional<units::Seconds> {
  FAIL("smallest must not simulate");
  return std::nullopt;
};

// One layer of hidden 20480 (so no pipeline split) on a node of 8 x 40 GB: 12 h^2 + v h
// parameters = 6.08e9, 16 bytes each with mixed-precision Adam (Rajbhandari et al. SC'20, 2 + 2 +
// 12): 97 GB, 48.6 GB per device at t = 2 and 24.3 GB at t = 4.
const std::vector<std::string> wide_layer = {"model.layers=1",         "model.hidden=20480",
                                             "model.heads=160",        "model.seq_len=512",
                                             "model.vocab=51200",      "cluster.nodes=1",
                                             "device.memory=40GB",     "training.global_batch=8",
                                             "training.micro_batch=1", "training.parallelism.search=smallest"};

} // namespace

TEST_CASE("smallest: a layer that fits only with t >= 4 on 40 GB devices gets t = 4") {
  const double h = 20480, v = 51200, bytes_per_parameter = 16;
  const double state = (12 * h * h + v * h) * bytes_per_parameter;
  REQUIRE(state / 2 > 40e9); // the closed form: t = 2 does not fit, t = 4 leaves room for activations
  REQUIRE(state / 4 < 0.7 * 40e9);
  const auto s = scenario(wide_layer);
  const auto result = search(s, planning::Objective::smallest, 4, no_simulation);
  CHECK(result.chosen.plan.parallelism.tensor == 4);
  CHECK(result.chosen.plan.parallelism.pipeline == 1);
  CHECK(result.chosen.plan.parallelism.data == 2);
  CHECK(result.simulated.empty());
  CHECK(result.fitting > 0);
}

TEST_CASE("smallest: no plan that fits has less model parallelism than the choice") {
  const auto s = scenario({"training.parallelism.search=smallest", "cluster.nodes=2"}); // GPT-3 13B, 16 x 80 GB
  const auto result = search(s, planning::Objective::smallest, 4, no_simulation);
  // 13e9 parameters x 16 bytes = 208 GB: at least 4 devices of model parallelism.
  CHECK(result.chosen.model_parallel() >= 4);
  const auto cost = cost::make_cost_model(s.cluster.device);
  for (const auto& c : planning::enumerate_candidates(s.workload.model, s.workload.plan, s.cluster, *cost).fitting)
    CHECK(c.model_parallel() >= result.chosen.model_parallel());
}

TEST_CASE("every candidate divides the model and the cluster and fits in memory") {
  const auto s = scenario(
      {"training.parallelism.search=fastest", "model.layers=8", "cluster.nodes=2", "training.global_batch=32"});
  const auto cost = cost::make_cost_model(s.cluster.device);
  const auto set = planning::enumerate_candidates(s.workload.model, s.workload.plan, s.cluster, *cost);
  REQUIRE(!set.fitting.empty());
  CHECK(set.valid >= static_cast<std::int64_t>(set.fitting.size()));
  CHECK(set.considered >= set.valid);
  const auto& m = s.workload.model;
  for (const auto& c : set.fitting) {
    const auto& p = c.plan.parallelism;
    CAPTURE(planning::describe(c.plan));
    CHECK(p.tensor * p.context * p.pipeline * p.data == s.cluster.device_count());
    CHECK(p.tensor <= s.cluster.node.devices);
    CHECK(m.heads % p.tensor == 0);
    CHECK(p.pipeline * p.virtual_stages <= m.layers);
    CHECK(c.plan.global_batch % (p.data * c.plan.micro_batch) == 0);
    CHECK(c.peak_memory <= s.cluster.device.memory);
    CHECK(analysis::summarize_memory(m, c.plan, s.cluster).fits);
    CHECK(c.lower_bound <= c.estimate);
  }
}

TEST_CASE("fastest returns the fastest of the candidates it simulated, in closed-form order") {
  const auto s = scenario(
      {"training.parallelism.search=fastest", "model.layers=8", "cluster.nodes=2", "training.global_batch=32"});
  // Times unrelated to the closed form, so that the choice must come from the simulations.
  const planning::Simulate fake = [](const model::TrainingPlan& p, std::string&) -> std::optional<units::Seconds> {
    const auto& q = p.parallelism;
    return units::Seconds(static_cast<double>((q.tensor * 7 + q.pipeline * 3 + p.micro_batch * 5) % 11) + 1);
  };
  const auto result = search(s, planning::Objective::fastest, 5, fake);
  REQUIRE(result.simulated.size() == 5);
  const auto cost = cost::make_cost_model(s.cluster.device);
  const auto order =
      planning::ranked(planning::enumerate_candidates(s.workload.model, s.workload.plan, s.cluster, *cost).fitting);
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < result.simulated.size(); ++i) {
    CHECK(planning::describe(result.simulated[i].candidate.plan) == planning::describe(order[i].plan));
    REQUIRE(result.simulated[i].time);
    best = std::min(best, result.simulated[i].time->value());
  }
  std::string unused;
  CHECK(fake(result.chosen.plan, unused)->value() == best);
}

TEST_CASE("pruning by the closed form keeps the best plan of a small exhaustive case") {
  // A 4-layer model on 2 nodes of 4 devices: every fitting plan simulated (brute force)
  // against the search that simulates the closed form's best 4.
  const auto s = scenario({"training.parallelism.search=fastest", "model.layers=4", "model.hidden=1024",
                           "model.heads=16", "model.seq_len=512", "model.vocab=8192", "node.devices=4",
                           "cluster.nodes=2", "training.global_batch=16"});
  const auto cost = cost::make_cost_model(s.cluster.device);
  const auto set = planning::enumerate_candidates(s.workload.model, s.workload.plan, s.cluster, *cost);
  REQUIRE(set.fitting.size() >= 20);
  double brute = std::numeric_limits<double>::infinity();
  for (const auto& c : set.fitting) brute = std::min(brute, simulated_time(s, c.plan, *cost).value());
  const planning::Simulate simulate = [&](const model::TrainingPlan& p, std::string&) -> std::optional<units::Seconds> {
    return simulated_time(s, p, *cost);
  };
  const auto result = search(s, planning::Objective::fastest, 4, simulate);
  CHECK(result.simulated.size() == 4);
  CHECK(simulated_time(s, result.chosen.plan, *cost).value() == doctest::Approx(brute).epsilon(1e-9));
}

TEST_CASE("nothing fits: out of memory, and nothing divides: an input error") {
  auto overrides = wide_layer;
  overrides.push_back("device.memory=10GB"); // 97 GB / 8 = 12 GB of state alone at t = 8
  CHECK_THROWS_AS((void)search(scenario(overrides), planning::Objective::smallest, 4, no_simulation), OutOfMemoryError);
  // 7 heads and 1 layer: only t = 1 divides the heads, and data = 8 does not divide a batch of 4
  // (unfused attention: no context parallelism to take the other factor).
  const auto odd =
      scenario({"training.parallelism.search=smallest", "model.layers=1", "model.heads=7", "model.hidden=896",
                "cluster.nodes=1", "training.global_batch=4", "training.attention=unfused"});
  CHECK_THROWS_AS((void)search(odd, planning::Objective::smallest, 4, no_simulation), InputError);
}

TEST_CASE("context parallelism is searched with fused attention only, and each degree divides the activations") {
  const std::vector<std::string> long_sequences = {"training.parallelism.search=fastest", "cluster.nodes=2",
                                                   "model.seq_len=8192", "training.global_batch=16"};
  auto fused_overrides = long_sequences;
  fused_overrides.push_back("training.attention=fused");
  const auto fused = scenario(fused_overrides);
  const auto cost = cost::make_cost_model(fused.cluster.device);
  const auto set = planning::enumerate_candidates(fused.workload.model, fused.workload.plan, fused.cluster, *cost);
  std::int64_t with_context = 0;
  for (const auto& c : set.fitting) {
    const auto& p = c.plan.parallelism;
    CAPTURE(planning::describe(c.plan));
    CHECK(p.tensor * p.context * p.pipeline * p.data == fused.cluster.device_count());
    CHECK(fused.workload.model.seq_len % (2 * p.context) == 0); // the causal split: 2 cp chunks
    CHECK(c.model_parallel() == p.tensor * p.context * p.pipeline);
    if (p.context == 1) continue;
    ++with_context;
    CHECK(planning::describe(c.plan).find(fmt::format("cp {}", p.context)) != std::string::npos);
    // The same plan without context parallelism (same data degree, so the same micro-batches in
    // flight): its activations are cp times as large (each rank holds s / cp tokens;
    // docs/memory-model.md, "Context parallelism").
    model::TrainingPlan whole = c.plan;
    whole.parallelism.context = 1;
    const auto split = model::estimate_memory(fused.workload.model, c.plan).stages.front().breakdown.activations;
    const auto full = model::estimate_memory(fused.workload.model, whole).stages.front().breakdown.activations;
    CHECK(full / split == doctest::Approx(static_cast<double>(p.context)).epsilon(0.01));
  }
  CHECK(with_context > 0);

  auto unfused_overrides = long_sequences;
  unfused_overrides.push_back("training.attention=unfused");
  const auto unfused = scenario(unfused_overrides);
  for (const auto& c :
       planning::enumerate_candidates(unfused.workload.model, unfused.workload.plan, unfused.cluster, *cost).fitting)
    CHECK(c.plan.parallelism.context == 1); // Megatron-Core's context parallelism needs fused attention
}
