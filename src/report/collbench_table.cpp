// nccl-tests' conventions for `twocs collbench` (the columns' values) and its JSON; the text table
// is collbench_nccl_table.cpp.
#include <twocs/report/collbench_table.hpp>

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

namespace twocs::report {
namespace {

constexpr double bytes_per_float = 4; // nccl-tests' default type, float (-d float)

} // namespace

double bus_factor(std::string_view collective, std::int64_t devices) {
  const double n = static_cast<double>(devices);
  if (devices <= 1) return 1.0;
  if (collective == "all-reduce") return 2.0 * (n - 1) / n;
  if (collective == "reduce-scatter" || collective == "all-gather" || collective == "all-to-all") return (n - 1) / n;
  return 1.0;
}

std::string_view nccl_redop(std::string_view collective) {
  // all_reduce.cu, reduce_scatter.cu and sendrecv.cu print the op (default -o sum); all_gather.cu,
  // alltoall.cu and broadcast.cu pass "none".
  return collective == "all-reduce" || collective == "reduce-scatter" || collective == "send-recv" ? "sum" : "none";
}

int nccl_root(std::string_view collective) {
  // broadcast.cu times root `ncclroot` (default 0, -r); every other test passes root -1.
  return collective == "broadcast" ? 0 : -1;
}

std::int64_t nccl_count(std::string_view collective, units::Bytes size, std::int64_t devices) {
  const auto count = static_cast<std::int64_t>(std::floor(size.value() / bytes_per_float));
  if (collective != "all-gather" && collective != "reduce-scatter" && collective != "all-to-all") return count;
  // v2.16.9 all_gather.cu, reduce_scatter.cu, alltoall.cu: `(count/nranks) & -(16/eltSize)`.
  const std::int64_t per_rank = count / std::max<std::int64_t>(devices, 1);
  return per_rank - per_rank % static_cast<std::int64_t>(16 / bytes_per_float);
}

double average_busbw_gbps(const CollbenchResult& r) {
  // common.cu sums busBw over every BenchTime call (out-of-place and in-place) and divides by their
  // number: `bw[0] /= bw_count[0]`. Both groups carry the same simulated time here.
  if (r.rows.empty()) return 0;
  double sum = 0;
  for (const CollbenchRow& row : r.rows) sum += row.busbw.value() / 1e9;
  return sum / static_cast<double>(r.rows.size());
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
                    {"redop", nccl_redop(r.collective)},
                    {"time_s", row.time.value()},
                    {"algbw_GBps", row.algbw.value() / 1e9},
                    {"busbw_GBps", row.busbw.value() / 1e9},
                    {"algorithm", row.algorithm},
                    {"root", nccl_root(r.collective)},
                    {"nccl_count", nccl_count(r.collective, row.size, r.devices)}});
  const CollbenchSettings& s = r.settings;
  j["min_bytes"] = s.min_bytes.value();
  j["max_bytes"] = s.max_bytes.value();
  j["step_factor"] = s.factor;
  j["iters"] = s.iters;
  j["warmup_iters"] = s.warmup_iters;
  j["placement"] = s.placement;
  j["avg_busbw_GBps"] = average_busbw_gbps(r);
  return j.dump(2) + "\n";
}

} // namespace twocs::report
