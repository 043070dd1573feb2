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
[[nodiscard]] units::Bytes estimated_host_memory(std::uint64_t tasks);

/// The machine's physical memory, when the system reports it.
[[nodiscard]] std::optional<units::Bytes> physical_memory();

/// Throws InputError when the estimate for `tasks` exceeds the budget: `budget_text` (the
/// --memory-budget value, e.g. "8GiB") or, without it, the physical memory. `source` names
/// the workload for the error's location.
void require_memory_budget(std::uint64_t tasks, const std::optional<std::string>& budget_text,
                           const std::string& source);

} // namespace twocs::cli
