// Folded runs with the folded peers' traffic (CollectivePolicy::folded_peer_traffic): the peers'
// copies of every collective and message that leaves the node are lowered whole, the simulated
// member enters them and waits for them; what stays inside a node keeps its folded lowering; a
// task count's full run is the same with and without them.
#include <doctest/doctest.h>

#include <cstdint>
#include <set>

#include <twocs/cost/roofline.hpp>
#include <twocs/lowering/lower_iteration.hpp>
#include <twocs/lowering/task_count.hpp>

#include "support/collective_networks.hpp"
#include "support/scenarios.hpp"

using namespace twocs;
using lowering::DeviceId;

namespace {

lowering::LoweringOptions folded(bool peer_traffic) {
  lowering::LoweringOptions o;
  o.fold_replicas = true;
  o.collectives.network = testing::dgx_like();
  o.collectives.folded_peer_traffic = peer_traffic;
  return o;
}

struct Senders {
  std::set<DeviceId> all;      // devices that send something
  std::set<DeviceId> per_kind; // devices that send in `group`
};

Senders senders(const lowering::TaskGraph& graph, model::CommGroup group) {
  Senders s;
  for (lowering::TaskId id = 0; id < graph.size(); ++id) {
    if (!graph.task(id).is_transfer() || graph.transfer(id).bytes.value() <= 0) continue;
    s.all.insert(graph.task(id).device);
    if (graph.transfer(id).group == group) s.per_kind.insert(graph.task(id).device);
  }
  return s;
}

/// A two-layer model's iteration under `plan`, folded without and with the peers' traffic.
struct Lowered {
  lowering::TaskGraph without, with;
};
Lowered lowered(const model::TrainingPlan& plan) {
  const auto model = testing::gpt(2, 512, 8);
  const cost::RooflineCostModel cost(testing::a100());
  return {lowering::lower_iteration(model, plan, cost, folded(false)),
          lowering::lower_iteration(model, plan, cost, folded(true))};
}

} // namespace

TEST_CASE("peer traffic: the data-parallel rings of every tensor rank leave the node, each lowered whole") {
  // t 8 (a node), d 4 (four nodes), one stage: the simulated device 0 stands for 31 peers.
  const auto [without, with] = lowered(testing::plan_of(8, 1, 4, 4));
  // Without: only device 0 and its data-parallel ring's neighbours send (its side of the ring).
  const auto data_without = senders(without, model::CommGroup::data).per_kind;
  CHECK(data_without.size() < 32);
  // With: every device of the stage sends its share of its own data-parallel ring.
  const auto data_with = senders(with, model::CommGroup::data).per_kind;
  CHECK(data_with.size() == 32);
  // Tensor-parallel collectives stay inside the node: no peer copies, the folded member's side.
  CHECK(senders(with, model::CommGroup::tensor).per_kind == senders(without, model::CommGroup::tensor).per_kind);
  // Kernels are the simulated device's only.
  for (lowering::TaskId id = 0; id < with.size(); ++id)
    if (!with.task(id).is_transfer()) CHECK(with.task(id).device == 0);
}

TEST_CASE("peer traffic: a message between stages on different nodes is sent by every peer pair") {
  // t 4, d 2, p 2: a stage is 8 devices, one node; each stage boundary crosses nodes.
  const auto [without, with] = lowered(testing::plan_of(4, 2, 2, 4));
  // Without: stage 0's device 0 sends activations to stage 1's device 8 only; with: all 8 pairs.
  CHECK(senders(without, model::CommGroup::pipeline).per_kind == std::set<DeviceId>{0, 8});
  CHECK(senders(with, model::CommGroup::pipeline).per_kind.size() == 16);
}

TEST_CASE("peer traffic: the full run's task count does not change, the folded one grows by the peers' transfers") {
  const auto model = testing::gpt(2, 512, 8);
  const cost::RooflineCostModel cost(testing::a100());
  const auto plan = testing::plan_of(8, 1, 4, 4);
  auto policy = folded(false).collectives;
  const auto without = lowering::count_tasks(model, plan, cost, policy);
  policy.folded_peer_traffic = true;
  const auto with = lowering::count_tasks(model, plan, cost, policy);
  CHECK(with.full == without.full);
  CHECK(with.folded > without.folded);
  // The folded count is what the folded lowering has.
  CHECK(with.folded == lowering::lower_iteration(model, plan, cost, folded(true)).size());
}

TEST_CASE("peer traffic: nothing without folding or without a network to tell the nodes apart") {
  const auto model = testing::gpt(2, 512, 8);
  const cost::RooflineCostModel cost(testing::a100());
  const auto plan = testing::plan_of(8, 1, 4, 4);
  auto unfolded = folded(true);
  unfolded.fold_replicas = false;
  auto plain = unfolded;
  plain.collectives.folded_peer_traffic = false;
  CHECK(lowering::lower_iteration(model, plan, cost, unfolded).size() ==
        lowering::lower_iteration(model, plan, cost, plain).size());
  auto no_network = folded(true);
  no_network.collectives.network.reset();
  auto no_network_plain = no_network;
  no_network_plain.collectives.folded_peer_traffic = false;
  CHECK(lowering::lower_iteration(model, plan, cost, no_network).size() ==
        lowering::lower_iteration(model, plan, cost, no_network_plain).size());
}
