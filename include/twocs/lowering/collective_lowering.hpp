// How a ring collective becomes transfers: step by step (every ring step a transfer per member,
// 2 (n - 1) n transfers for an all-reduce) or coarse (streaming: one transfer per ring link
// carrying the bytes the whole step sequence puts on that link, plus the latency of its steps).
//
// The coarse form is what a chunked, pipelined ring (NCCL's) does with a large message: every
// link streams its 2 (n - 1) / n S (all-reduce; (n - 1) / n S for reduce-scatter and all-gather)
// while the others do, so the collective takes about that over the narrowest link plus the
// per-step latencies (Patarasuk & Yuan, JPDC 2009, eq. for the ring; NCCL's ring). On an idle
// network it equals the step-by-step closed form 2 (n - 1) (S / (n B) + L) exactly; under
// contention its links are loaded continuously instead of step after step (docs/performance.md,
// "Approximations", gives the measured difference).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include <twocs/lowering/collective_algorithm.hpp>

namespace twocs::lowering {

enum class CollectiveLowering : std::uint8_t {
  step,      // every ring step a transfer per member (exact store-and-forward ring)
  coarse,    // one transfer per ring link for the whole collective (streaming ring)
  automatic, // coarse where the ring is large (coarse_applies_automatically), step elsewhere
};

[[nodiscard]] std::string_view to_string(CollectiveLowering l);
[[nodiscard]] std::optional<CollectiveLowering> collective_lowering_from_string(std::string_view name);

/// Whether the coarse form exists for `kind` lowered by `algorithm`: ring all-reduce,
/// reduce-scatter and all-gather over more than two ranks (a two-rank ring has no steps to merge
/// beyond 2: it stays exact anyway, and point-to-point, broadcast and all-to-all are not rings).
/// (The tree is always lowered as streams and a last slice: src/lowering/algorithms/tree.cpp.)
[[nodiscard]] bool coarse_possible(CollectiveKind kind, Algorithm algorithm, std::int32_t ranks);

/// `automatic`'s rule: coarse for rings of at least this many ranks (a node's tensor-parallel
/// group and every data-parallel ring across nodes), whose 2 (n - 1) n transfers (112 and more)
/// dominate a simulation; smaller rings are cheap and stay exact. Coarse stayed within 0.07% of
/// step by step on every scenario measured, contended ones included (docs/performance.md,
/// "Coarse collectives").
inline constexpr std::int32_t coarse_from_ranks = 8;

/// Whether a collective of `kind` by `algorithm` over `ranks` ranks is lowered coarse under `mode`.
[[nodiscard]] bool lowers_coarse(CollectiveLowering mode, CollectiveKind kind, Algorithm algorithm, std::int32_t ranks);

} // namespace twocs::lowering
