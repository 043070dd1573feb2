// The sweep CSV's columns: every scalar of a scenario's JSON summary is a column holding the same
// value, so that a study can chart whatever `twocs run --json` reports (MoE's expert kind too).
#include <doctest/doctest.h>

#include <set>

#include <nlohmann/json.hpp>

#include "sweep/sweep_fixture.hpp"

using namespace twocs::test;

namespace {

/// Every scalar of `node`, by its dotted path.
void flatten(const nlohmann::json& node, const std::string& path, std::map<std::string, std::string>& out) {
  if (node.is_object()) {
    for (const auto& [key, value] : node.items()) flatten(value, path.empty() ? key : path + "." + key, out);
  } else if (node.is_primitive() && !node.is_null()) {
    out[path] = node.is_string() ? node.get<std::string>() : node.dump();
  }
}

} // namespace

TEST_CASE("every scalar of a MoE scenario's JSON summary is a sweep CSV column with the same value") {
  const StudyFolder folder("columns");
  const fs::path workload = folder.root / "moe.yaml";
  std::ofstream(workload) << "model: {layers: 2, hidden: 256, heads: 4, vocab: 1000, seq_len: 64,\n"
                             "  moe: {experts: 4, top_k: 2, expert_ffn_hidden: 256}}\n"
                             "training: {global_batch: 4, micro_batch: 1,\n"
                             "  parallelism: {tensor: 1, pipeline: 1, data: 2, expert: 2}}\n";
  const std::string platform = TWOCS_SOURCE_DIR "/platforms/dgx-a100-80gb.yaml";
  std::ofstream(folder.root / "moe-study.yaml") << "study: moe\nbase:\n  workload: moe.yaml\n  platform: " << platform
                                                << "\n  set: {cluster.nodes: 1}\naxes:\n"
                                                   "  - {key: model.hidden, values: [256]}\n";
  REQUIRE(wait_exit(start_program({TWOCS_PROGRAM, "sweep", (folder.root / "moe-study.yaml").string(), "--jobs", "1",
                                   "--output", folder.csv().string()})) == 0);
  const std::string json = (folder.root / "moe.json").string();
  REQUIRE(wait_exit(start_program({TWOCS_PROGRAM, "run", "--workload", workload.string(), "--platform", platform,
                                   "--set", "cluster.nodes=1", "--quiet", "--json", json})) == 0);
  std::map<std::string, std::string> scalars;
  flatten(nlohmann::json::parse(file_text(json)), "", scalars);
  const auto table = read_results(folder.csv());
  REQUIRE(table.rows.size() == 1);
  const auto& row = table.rows.front();
  // Named by the study's inputs or a sentence, not a number to chart; the plan has its own
  // columns; collective_algorithms' keys differ from scenario to scenario.
  const std::set<std::string> not_columns = {"workload", "platform", "approximations.reason",
                                             "approximations.replay.reason"};
  for (const auto& [path, value] : scalars) {
    if (not_columns.count(path) != 0 || path.rfind("plan.", 0) == 0 || path.rfind("collective_algorithms.", 0) == 0)
      continue;
    const std::size_t c = table.column(path);
    CHECK_MESSAGE(c < table.columns.size(), "no column " << path);
    if (c < table.columns.size() && path != "wall_time_s") CHECK_MESSAGE(row[c] == value, path);
  }
  for (const char* plan : {"plan.tensor", "plan.context", "plan.data", "plan.pipeline_schedule"})
    CHECK(row[table.column(plan)] == scalars.at(plan));
  CHECK(std::stod(row[table.column("comm_busy_by_kind_s.expert")]) > 0); // the dispatch and combine ran
}
