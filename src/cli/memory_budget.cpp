#include "memory_budget.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <twocs/error.hpp>
#include <twocs/units/format.hpp>
#include <twocs/units/parse.hpp>

namespace twocs::cli {
namespace {

// Measured with /usr/bin/time after kernels were interned and predecessor rows left to analysis
// (2026-12-05; docs/performance.md): every device of scenario A's plan simulated peaks at 3.70 GB
// resident for 56.4 M tasks (65 B per task), the same plan on 256 devices at 1.00 GB for 14.1 M
// (71 B); the default scenario at 56 MB. Rounded up for a margin.
constexpr double bytes_per_task = 100.0;
constexpr double base_bytes = 64.0 * 1048576.0;

units::Bytes parse_budget(const std::string& text) {
  try {
    const units::Bytes budget = units::parse_bytes(text);
    if (budget.value() > 0) return budget;
  } catch (const units::UnitError& e) {
    throw InputError(fmt::format("--memory-budget '{}': {}", text, e.what()), {}, "write a size, e.g. 16GiB");
  }
  throw InputError(fmt::format("--memory-budget '{}' must be positive", text), {}, "write a size, e.g. 16GiB");
}

} // namespace

units::Bytes estimated_host_memory(double tasks) { return units::Bytes(base_bytes + bytes_per_task * tasks); }

std::optional<units::Bytes> physical_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return std::nullopt;
  return units::Bytes(static_cast<double>(pages) * static_cast<double>(page_size));
}

void require_memory_budget(double tasks, const std::optional<std::string>& budget_text, bool at_least) {
  const std::optional<units::Bytes> budget = budget_text ? parse_budget(*budget_text) : physical_memory();
  if (!budget) return;
  const units::Bytes needed = estimated_host_memory(tasks);
  if (needed.value() <= budget->value()) return;
  InputError error(
      fmt::format("this plan lowers to {} {:.0f} tasks and needs {} {} of memory to simulate, more than the {} {}",
                  at_least ? "at least" : "about", tasks, at_least ? "at least" : "about", units::to_string(needed),
                  units::to_string(*budget), budget_text ? "given by --memory-budget" : "this machine has"),
      "training.global_batch",
      "fold replicas (--fold on), simulate fewer micro-batches (training.global_batch), use a coarser collective, "
      "or give a larger --memory-budget on a machine with the memory");
  throw error;
}

} // namespace twocs::cli
