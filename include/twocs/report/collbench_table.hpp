// `twocs collbench` results in the layout of nccl-tests (NVIDIA/nccl-tests, doc/PERFORMANCE.md):
// size, count, type, redop, time, algorithm bandwidth and bus bandwidth per size, and as JSON.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <twocs/units/quantity.hpp>

namespace twocs::report {

struct CollbenchRow {
  units::Bytes size;     // nccl-tests' S: the whole array
  units::Seconds time;   // simulated, first message start to last message end
  units::ByteRate algbw; // S / time
  units::ByteRate busbw; // algbw x the collective's bus factor
  std::string algorithm; // the one that ran
};

struct CollbenchResult {
  std::string platform;
  std::string collective; // nccl-tests' name: all-reduce, all-gather, ...
  std::int64_t devices = 0;
  std::vector<CollbenchRow> rows;
};

/// nccl-tests' bus bandwidth factor (doc/PERFORMANCE.md): all-reduce 2 (n - 1) / n;
/// reduce-scatter, all-gather and all-to-all (n - 1) / n; broadcast and send-recv 1.
[[nodiscard]] double bus_factor(std::string_view collective, std::int64_t devices);

void write_collbench_table(std::ostream& out, const CollbenchResult& result);
[[nodiscard]] std::string collbench_json(const CollbenchResult& result);

} // namespace twocs::report
