#include <twocs/report/collbench_table.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace twocs::report {
namespace {

/// nccl-tests' reduction column: sum for reductions, none otherwise.
std::string_view redop_of(std::string_view collective) {
  return collective == "all-reduce" || collective == "reduce-scatter" ? "sum" : "none";
}

constexpr double bytes_per_float = 4; // nccl-tests' default type, float

} // namespace

double bus_factor(std::string_view collective, std::int64_t devices) {
  const double n = static_cast<double>(devices);
  if (devices <= 1) return 1.0;
  if (collective == "all-reduce") return 2.0 * (n - 1) / n;
  if (collective == "reduce-scatter" || collective == "all-gather" || collective == "all-to-all") return (n - 1) / n;
  return 1.0;
}

void write_collbench_table(std::ostream& out, const CollbenchResult& r) {
  out << fmt::format("# twocs collbench: {} on {} devices of {} (simulated)\n", r.collective, r.devices, r.platform);
  out << fmt::format("#{:>14} {:>14} {:>7} {:>6} {:>12} {:>8} {:>8}  {}\n", "size", "count", "type", "redop", "time",
                     "algbw", "busbw", "algorithm");
  out << fmt::format("#{:>14} {:>14} {:>7} {:>6} {:>12} {:>8} {:>8}\n", "(B)", "(elements)", "", "", "(us)", "(GB/s)",
                     "(GB/s)");
  for (const CollbenchRow& row : r.rows)
    out << fmt::format(" {:>14.0f} {:>14.0f} {:>7} {:>6} {:>12.2f} {:>8.2f} {:>8.2f}  {}\n", row.size.value(),
                       row.size.value() / bytes_per_float, "float", redop_of(r.collective), row.time.value() * 1e6,
                       row.algbw.value() / 1e9, row.busbw.value() / 1e9, row.algorithm);
}

std::string collbench_json(const CollbenchResult& r) {
  nlohmann::ordered_json j;
  j["platform"] = r.platform;
  j["collective"] = r.collective;
  j["devices"] = r.devices;
  auto& rows = j["rows"] = nlohmann::ordered_json::array();
  for (const CollbenchRow& row : r.rows)
    rows.push_back({{"size_bytes", row.size.value()},
                    {"count", row.size.value() / bytes_per_float},
                    {"type", "float"},
                    {"redop", redop_of(r.collective)},
                    {"time_s", row.time.value()},
                    {"algbw_GBps", row.algbw.value() / 1e9},
                    {"busbw_GBps", row.busbw.value() / 1e9},
                    {"algorithm", row.algorithm}});
  return j.dump(2) + "\n";
}

} // namespace twocs::report
