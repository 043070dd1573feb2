// `twocs collbench`'s table in the layout nccl-tests prints (NVIDIA/nccl-tests src/common.cu,
// v2.13 to v2.16: the format strings are quoted beside each line), so that a simulated table diffs
// against a measured log column for column. What twocs adds is in `#` lines, which tools reading
// nccl-tests logs skip: the settings at the top, the algorithm that ran at the end.
#include <twocs/report/collbench_table.hpp>

#include <fmt/format.h>

namespace twocs::report {
namespace {

/// nccl-tests' time column in us (BenchTime): no decimals from 10 ms, one from 100 us, else two.
std::string time_us(units::Seconds time) {
  const double us = time.value() * 1e6;
  return fmt::format("{:7.{}f}", us, us >= 10000.0 ? 0 : us >= 100.0 ? 1 : 2);
}

/// One out-of-place or in-place group, `"  %7s  %6.2f  %6.2f  %5s"`. #wrong is N/A, as nccl-tests
/// prints it when it does not check the data (-c 0): a simulation moves no data to check.
std::string timed_group(const CollbenchRow& row) {
  return fmt::format("  {:>7}  {:6.2f}  {:6.2f}  {:>5}", time_us(row.time), row.algbw.value() / 1e9,
                     row.busbw.value() / 1e9, "N/A");
}

std::string whole_bytes(units::Bytes size) { return fmt::format("{:.0f}", size.value()); }

/// The settings, as nccl-tests' `# nThread ... graph: 0` line (main) with twocs's own before it.
void write_settings(std::ostream& out, const CollbenchResult& r) {
  const CollbenchSettings& s = r.settings;
  out << fmt::format("# twocs collbench: {} on {} devices of {}, {}\n", r.collective, r.devices, r.platform,
                     s.placement);
  out << "# Times are simulated, not measured: the simulation is deterministic, so every iteration takes the\n"
         "# same time and the warm-up and timed iteration counts below are echoed, not run.\n";
  out << fmt::format("# nThread 1 nGpus {} minBytes {} maxBytes {} step: {:g}(factor) warmup iters: {} iters: {} "
                     "agg iters: 1 validation: 0 graph: 0\n",
                     r.devices, whole_bytes(s.min_bytes), whole_bytes(s.max_bytes), s.factor, s.warmup_iters, s.iters);
}

/// The column header (threadRunTests), trailing spaces included.
void write_column_header(std::ostream& out) {
  out << "#\n";
  out << fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}           out-of-place                       in-place   "
                     "       \n",
                     "", "", "", "", "");
  out << fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6} {:>6}  {:>7}  {:>6}  {:>6} {:>6}\n",
                     "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
                     "busbw", "#wrong");
  out << fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>5}  {:>7}  {:>6}  {:>6}  {:>5}\n",
                     "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
}

/// One row per size (TimeTest: `"%12li  %12li  %8s  %6s  %6s"`, then out-of-place and in-place):
/// the same simulated collective in both groups, which move the same bytes over the same links.
void write_rows(std::ostream& out, const CollbenchResult& r) {
  for (const CollbenchRow& row : r.rows) {
    out << fmt::format("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}", whole_bytes(row.size),
                       nccl_count(r.collective, row.size, r.devices), "float", nccl_redop(r.collective),
                       nccl_root(r.collective));
    out << timed_group(row) << timed_group(row) << '\n';
  }
}

/// The footer (threadRunTests; NCCL_TESTS_MIN_BW unset, so nothing follows the average but its
/// space), then the algorithm that ran, which nccl-tests has no column for: one line per run of
/// consecutive sizes that share it, `# FIRST .. LAST  ALGORITHM` (--json has it per row).
void write_footer(std::ostream& out, const CollbenchResult& r) {
  out << "# Out of bounds values : 0 OK\n";
  out << fmt::format("# Avg bus bandwidth    : {:g} \n", average_busbw_gbps(r));
  out << "#\n";
  out << "# Algorithm by size (twocs's choice; nccl-tests prints none):\n";
  for (std::size_t first = 0, last = 0; first < r.rows.size(); first = last) {
    while (last < r.rows.size() && r.rows[last].algorithm == r.rows[first].algorithm) ++last;
    out << fmt::format("# {:>10} .. {:>10}  {}\n", whole_bytes(r.rows[first].size), whole_bytes(r.rows[last - 1].size),
                       r.rows[first].algorithm);
  }
}

} // namespace

void write_collbench_table(std::ostream& out, const CollbenchResult& r) {
  write_settings(out, r);
  write_column_header(out);
  write_rows(out, r);
  write_footer(out, r);
}

} // namespace twocs::report
