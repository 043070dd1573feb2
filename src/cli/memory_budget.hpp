// Private: the host memory a simulation will take, estimated from its task count before
// anything is lowered, and the budget it must fit in (--memory-budget, default: the
// machine's physical memory), so that a huge plan is refused instead of swapping or being
// killed by the kernel.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <twocs/units/quantity.hpp>

namespace twocs::cli {

/// Peak resident memory of `twocs run` for a plan of `tasks` tasks.
[[nodiscard]] units::Bytes estimated_host_memory(double tasks);

/// The machine's physical memory, when the system reports it.
[[nodiscard]] std::optional<units::Bytes> physical_memory();

/// Throws InputError when the estimate for `tasks` exceeds the budget: `budget_text` (the
/// --memory-budget value, e.g. "8GiB") or, without it, the physical memory. The error blames
/// training.global_batch (which sets the micro-batches); the caller locates it. `at_least`:
/// `tasks` is a lower bound (lowering::least_folded_tasks), and the message says so.
void require_memory_budget(double tasks, const std::optional<std::string>& budget_text, bool at_least);

} // namespace twocs::cli
