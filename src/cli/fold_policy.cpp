#include "fold_policy.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace twocs::cli {
namespace {

std::int64_t nodes_used(const hardware::ClusterSpec& cluster, const model::TrainingPlan& plan) {
  const std::int64_t per_node = std::max<std::int64_t>(cluster.node.devices, 1);
  return (plan.world_size() + per_node - 1) / per_node;
}

/// Routed networks whose links replicas share whatever the oversubscription (docs/network.md).
std::optional<std::string> routed_hazard(const hardware::ClusterSpec& cluster, const model::TrainingPlan& plan,
                                         std::int64_t nodes) {
  using hardware::NetworkTopology;
  const auto& net = cluster.network;
  const std::int64_t leaf_nodes = std::max<std::int64_t>(net.nodes_per_switch, 1);
  if (nodes <= 1) return std::nullopt;
  if (net.topology == NetworkTopology::torus)
    return std::string("the network is a torus: dimension-order routes cross other nodes' links");
  if (net.topology == NetworkTopology::dragonfly && nodes > leaf_nodes)
    return std::string("the network is a dragonfly: routes between routers share local and global links");
  const bool tree = net.topology == NetworkTopology::fat_tree || net.topology == NetworkTopology::rail_fat_tree;
  const bool rail = net.topology == NetworkTopology::rail_fat_tree;
  // Groups across nodes are rail-aligned only when their members sit at the same local index:
  // a tensor-parallel size that is a multiple of the node keeps data- and pipeline-parallel peers
  // on one rail; otherwise cross-rail traffic is relayed (PXN) or climbs the spine.
  const bool cross_rail = rail && plan.parallelism.tensor % cluster.node.devices != 0;
  const bool spine_within_group = cross_rail && net.cross_rail == hardware::CrossRail::spine;
  if (tree && net.routing == hardware::Routing::ecmp && (nodes > leaf_nodes || spine_within_group))
    return fmt::format("ECMP hashes flows onto shared uplinks (cluster.network.routing: ecmp) and the job spans {} "
                       "leaf switches: replicas' flows collide where the folded run has one alone",
                       (nodes + leaf_nodes - 1) / leaf_nodes);
  if (cross_rail)
    return fmt::format("the rail-optimized tree carries cross-rail traffic ({}, tensor parallelism {} does not fill "
                       "a node of {}): replicas share relaying devices' links or the spine",
                       net.cross_rail == hardware::CrossRail::pxn ? "PXN" : "spine", plan.parallelism.tensor,
                       cluster.node.devices);
  return std::nullopt;
}

std::optional<std::string> network_hazard(const hardware::ClusterSpec& cluster, const model::TrainingPlan& plan,
                                          std::int64_t nodes) {
  const auto& net = cluster.network;
  if (net.devices_per_nic > 1)
    return fmt::format("{} devices share each NIC (cluster.network.devices_per_nic)", net.devices_per_nic);
  if (auto routed = routed_hazard(cluster, plan, nodes)) return routed;
  const bool tree =
      net.topology == hardware::NetworkTopology::fat_tree || net.topology == hardware::NetworkTopology::rail_fat_tree;
  if (!tree || nodes <= 1) return std::nullopt;
  // Traffic leaves a leaf switch only when the job spans several (docs/network.md, fat tree).
  if (net.oversubscription > 1.0 && nodes > net.nodes_per_switch)
    return fmt::format("the fat tree is {:g}:1 oversubscribed at the leaf switches and the job spans {} of them"
                       ": replicas share its uplinks",
                       net.oversubscription, (nodes + net.nodes_per_switch - 1) / net.nodes_per_switch);
  if (net.upper_oversubscription > 1.0 && net.switches_per_pod > 0 &&
      nodes > net.nodes_per_switch * net.switches_per_pod)
    return fmt::format("the fat tree is {:g}:1 oversubscribed at the aggregation switches and the job spans "
                       "several pods: replicas share its uplinks",
                       net.upper_oversubscription);
  return std::nullopt;
}

} // namespace

std::optional<std::string> fold_hazard(const hardware::ClusterSpec& cluster, const model::TrainingPlan& plan) {
  // A ring of devices routes non-neighbour transfers through other devices' links.
  if (cluster.node.topology == hardware::NodeTopology::ring && cluster.node.devices > 2)
    return std::string("the node interconnect is a ring (transfers cross other devices' links)");
  // Every collective algorithm folds: the ring is lowered from the simulated member's side, the
  // others (not the same seen from every rank) whole over the group, every folded member
  // entering with the simulated one (lowering::CollectiveInstance). Neither needs a hazard.
  return network_hazard(cluster, plan, nodes_used(cluster, plan));
}

FoldDecision decide_fold(FoldMode mode, const hardware::ClusterSpec& cluster, const model::TrainingPlan& plan,
                         std::uint64_t full_tasks, std::uint64_t fold_above_tasks) {
  const bool has_replicas = plan.parallelism.tensor * plan.parallelism.data > 1;
  if (!has_replicas) return {false, "no tensor or data-parallel replicas to fold", std::nullopt};
  const auto hazard = fold_hazard(cluster, plan);
  if (mode == FoldMode::off) return {false, "--fold off", hazard};
  if (mode == FoldMode::on)
    return {true, hazard ? "--fold on, although " + *hazard : "--fold on (exact: no link is shared by replicas)",
            hazard};
  if (mode == FoldMode::shared)
    return {true,
            hazard ? "--fold shared: the folded peers' traffic that leaves the node is simulated, as " + *hazard
                   : "--fold shared (no link is shared by replicas: as --fold on, with the peers' traffic)",
            hazard, true};
  if (full_tasks <= fold_above_tasks)
    return {false, fmt::format("the full run has {} tasks, within --fold auto's {}", full_tasks, fold_above_tasks),
            hazard, false, true};
  // Where replicas share links the folded peers' traffic is simulated on them (--fold shared),
  // which reproduces the full run's network on every fabric of docs/simulation.md's table; a
  // node ring's links inside the node are not, so there every device is simulated.
  if (hazard && cluster.node.topology == hardware::NodeTopology::ring && cluster.node.devices > 2)
    return {false, "not folded by --fold auto: " + *hazard, hazard};
  if (hazard)
    return {true,
            fmt::format("--fold auto: the full run has {} tasks and {}; the folded peers' traffic is simulated "
                        "on those links",
                        full_tasks, *hazard),
            hazard, true, true};
  return {true, fmt::format("--fold auto: the full run has {} tasks and no link is shared by replicas", full_tasks),
          std::nullopt, false, true};
}

} // namespace twocs::cli
