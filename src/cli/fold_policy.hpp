// Private: when folding replicas (simulating one device per pipeline stage) is exact, and what
// `--fold auto|on|off` decides. Folding assumes every mirrored peer sees the same network as
// the simulated one; where replicas share a link (an oversubscribed fat-tree level, a NIC shared
// by several devices, a node ring) the simulated device would run alone
// on a link its peers crowd in the full run, and the folded result would be optimistic.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <twocs/hardware/cluster.hpp>
#include <twocs/model/training_plan.hpp>

#include "run_command.hpp"

namespace twocs::cli {

/// Why folding would change the result on this cluster and plan, or nullopt when the folded run
/// equals the full one (a symmetric network whose links no two replicas share).
[[nodiscard]] std::optional<std::string> fold_hazard(const hardware::ClusterSpec& cluster,
                                                     const model::TrainingPlan& plan);

struct FoldDecision {
  bool fold = false;
  std::string reason;                // why it folds or not, in the user's words (for the log, table and JSON)
  std::optional<std::string> hazard; // fold_hazard's reason, when there is one
  bool peer_traffic = false;         // --fold shared: the peers' traffic is lowered (CollectivePolicy)
  bool by_task_count = false;        // --fold auto weighed the full run's task count, which the reason states

  /// Folds although replicas share links, without their traffic (only with --fold on): the caller warns.
  [[nodiscard]] bool inexact() const { return fold && hazard.has_value() && !peer_traffic; }
};

/// `full_tasks`: the size of the unfolded DAG. auto folds only when the full run exceeds
/// `fold_above_tasks`, with the folded peers' traffic where replicas share network links (not a
/// node ring, which it leaves unfolded); on folds whenever there are replicas (inexact where they
/// share links: the caller warns); shared folds with the peers' traffic; off never folds.
[[nodiscard]] FoldDecision decide_fold(FoldMode mode, const hardware::ClusterSpec& cluster,
                                       const model::TrainingPlan& plan, std::uint64_t full_tasks,
                                       std::uint64_t fold_above_tasks);

} // namespace twocs::cli
