// `twocs collbench` results in the layout of nccl-tests (NVIDIA/nccl-tests, doc/PERFORMANCE.md;
// the table as src/common.cu of v2.13 to v2.16 prints it): settings as `#` lines, then size,
// count, type, redop, root and an out-of-place and an in-place group of time, algorithm bandwidth,
// bus bandwidth and #wrong per size, then the average bus bandwidth; and as JSON.
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

/// The command's settings, echoed at the top of the table as nccl-tests echoes its own.
struct CollbenchSettings {
  units::Bytes min_bytes;
  units::Bytes max_bytes;
  double factor = 2;
  int iters = 20;        // nccl-tests' default -n (v2.16.9 src/common.cu: `static int iters = 20`)
  int warmup_iters = 1;  // nccl-tests' default -w (v2.16.9 src/common.cu: `static int warmup_iters = 1`)
  std::string placement; // where the group's ranks sit, e.g. "the first 8 devices"
};

struct CollbenchResult {
  std::string platform;
  std::string collective; // nccl-tests' name: all-reduce, all-gather, ...
  std::int64_t devices = 0;
  std::vector<CollbenchRow> rows;
  CollbenchSettings settings;
};

/// nccl-tests' bus bandwidth factor (doc/PERFORMANCE.md): all-reduce 2 (n - 1) / n;
/// reduce-scatter, all-gather and all-to-all (n - 1) / n; broadcast and send-recv 1.
[[nodiscard]] double bus_factor(std::string_view collective, std::int64_t devices);

/// nccl-tests' redop column: the default op, sum, for the tests that reduce or take an op
/// (all_reduce, reduce_scatter, sendrecv), "none" for the others (all_gather, alltoall, broadcast).
[[nodiscard]] std::string_view nccl_redop(std::string_view collective);
/// nccl-tests' root column: -1 for collectives without a root, the default root 0 for broadcast.
[[nodiscard]] int nccl_root(std::string_view collective);
/// nccl-tests' count column, float elements: the count argument of the NCCL call (v2.16.9, each
/// test's GetCollByteCount): S / 4 for all-reduce, broadcast and send-recv; per rank, rounded
/// down to a multiple of 4 elements, for all-gather, reduce-scatter and all-to-all.
[[nodiscard]] std::int64_t nccl_count(std::string_view collective, units::Bytes size, std::int64_t devices);
/// nccl-tests' "Avg bus bandwidth" in GB/s: the mean bus bandwidth over every timed group
/// (out-of-place and in-place of each row, equal here, so the mean over the rows); 0 when empty.
[[nodiscard]] double average_busbw_gbps(const CollbenchResult& result);

/// The table in nccl-tests' layout, then one `#` line per size naming the algorithm that ran.
void write_collbench_table(std::ostream& out, const CollbenchResult& result);
[[nodiscard]] std::string collbench_json(const CollbenchResult& result);

} // namespace twocs::report
