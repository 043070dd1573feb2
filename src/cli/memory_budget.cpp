#include "memory_budget.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <twocs/error.hpp>
#include <twocs/units/format.hpp>
#include <twocs/units/parse.hpp>

namespace twocs::cli {
namespace {

// Measured: peak RSS of `twocs run --fold off` on the default scenario is 174 MiB at 272,512
// tasks and 582 MiB at 964,096 tasks (global_batch 64): about 620 bytes per task above a
// base of about 10 MiB (program, SimGrid, the platform). Rounded up to keep a margin.
constexpr double bytes_per_task = 650.0;
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

units::Bytes estimated_host_memory(std::uint64_t tasks) {
  return units::Bytes(base_bytes + bytes_per_task * static_cast<double>(tasks));
}

std::optional<units::Bytes> physical_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return std::nullopt;
  return units::Bytes(static_cast<double>(pages) * static_cast<double>(page_size));
}

void require_memory_budget(std::uint64_t tasks, const std::optional<std::string>& budget_text,
                           const std::string& source) {
  const std::optional<units::Bytes> budget = budget_text ? parse_budget(*budget_text) : physical_memory();
  if (!budget) return;
  const units::Bytes needed = estimated_host_memory(tasks);
  if (needed.value() <= budget->value()) return;
  InputError error(
      fmt::format("this plan lowers to about {} tasks and needs about {} of memory to simulate, more than the {} {}",
                  tasks, units::to_string(needed), units::to_string(*budget),
                  budget_text ? "given by --memory-budget" : "this machine has"),
      "training",
      "fold replicas (--fold on), simulate fewer micro-batches (training.global_batch), use a coarser collective, "
      "or give a larger --memory-budget on a machine with the memory");
  error.set_location({source});
  throw error;
}

} // namespace twocs::cli
