#include <twocs/report/dag_export.hpp>

#include <sstream>
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "report/report_fixtures.hpp"
#include "support/golden.hpp"

using nlohmann::json;
using twocs::lowering::TaskId;

namespace {

std::string dot_text(const twocs::lowering::TaskGraph& graph) {
  std::ostringstream out;
  twocs::report::write_dag_dot(out, graph);
  return out.str();
}

std::string json_text(const twocs::lowering::TaskGraph& graph) {
  std::ostringstream out;
  twocs::report::write_dag_json(out, graph);
  return out.str();
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

} // namespace

TEST_SUITE("dag export") {
  TEST_CASE("dag export: JSON holds every task and dependency") {
    const auto run = twocs::testing::tiny_run();
    const auto& graph = run.graph;
    const json j = json::parse(json_text(graph));
    CHECK(j["devices"] == 2);
    REQUIRE(j["tasks"].size() == graph.size());
    for (TaskId id = 0; id < graph.size(); ++id) {
      INFO("task " << id);
      const auto& t = graph.task(id);
      const auto& e = j["tasks"][id];
      CHECK(e["id"] == id);
      CHECK(e["kind"] == std::string(twocs::lowering::to_string(t.kind)));
      CHECK(e["device"] == t.device);
      CHECK(e["stream"] == std::string(twocs::lowering::to_string(graph.stream(id))));
      CHECK(e["pass"] == std::string(twocs::model::to_string(t.pass)));
      CHECK(e["layer"] == t.layer);
      CHECK(e["micro_batch"] == t.micro_batch);
      CHECK(j["labels"][e["label"].get<std::size_t>()] == graph.label_of(id));
      if (t.is_transfer()) { // a transfer has no kernel fields: none or zero in the file
        const auto& x = graph.transfer(id);
        CHECK(e["peer"] == x.peer);
        CHECK(e["collective"] == x.collective);
        CHECK(e["step"] == x.step);
        CHECK(e["duration_s"].get<double>() == 0.0);
        CHECK(e["flops"].get<double>() == 0.0);
        CHECK(e["bytes"].get<double>() == x.bytes.value());
        CHECK(e["model_flops"] == false);
      } else { // a kernel has no destination, collective or step
        const auto& k = graph.kernel(id);
        CHECK(e["peer"] == -1);
        CHECK(e["collective"] == -1);
        CHECK(e["step"] == -1);
        CHECK(e["duration_s"].get<double>() == k.duration.value());
        CHECK(e["flops"].get<double>() == k.flops.value());
        CHECK(e["bytes"].get<double>() == k.bytes.value());
        CHECK(e["model_flops"] == k.model_flops);
      }
    }
    REQUIRE(j["dependencies"].size() == graph.dependency_count());
    std::size_t i = 0;
    for (TaskId id = 0; id < graph.size(); ++id) {
      graph.for_each_successor(id, [&](TaskId next) {
        CHECK(j["dependencies"][i] == json::array({id, next}));
        ++i;
      });
    }
  }

  TEST_CASE("dag export: DOT has one node per task, clustered by device, and every edge") {
    const auto run = twocs::testing::tiny_run();
    const std::string dot = dot_text(run.graph);
    CHECK(dot.rfind("digraph twocs {", 0) == 0);
    CHECK(occurrences(dot, "subgraph cluster_") == 2);
    CHECK(occurrences(dot, "subgraph cluster_0 {") == 1);
    CHECK(occurrences(dot, "subgraph cluster_1 {") == 1);
    for (TaskId id = 0; id < run.graph.size(); ++id) CHECK(occurrences(dot, "    t" + std::to_string(id) + " [") == 1);
    CHECK(occurrences(dot, " -> ") == run.graph.dependency_count());
    CHECK(dot.find("  t0 -> t1;\n") != std::string::npos);
    CHECK(dot.find("attn.qkv L0 mb0\\n1 ms") != std::string::npos);
    CHECK(dot.find("stage.send L0 mb0 0->1\\n16 MiB") != std::string::npos);
  }

  TEST_CASE("dag export: quotes in labels are escaped in DOT and JSON") {
    auto run = twocs::testing::tiny_run();
    twocs::testing::add(run, {twocs::lowering::TaskKind::compute, twocs::lowering::Stream::compute,
                              twocs::model::Pass::forward, 1, -1, -1, -1, -1, -1, "say \"hi\"\\", 1e-6, 1, 1, 0, 1e-6});
    CHECK(dot_text(run.graph).find("say \\\"hi\\\"\\\\") != std::string::npos);
    const json j = json::parse(json_text(run.graph));
    CHECK(j["labels"].back() == "say \"hi\"\\");
  }

  TEST_CASE("dag export: deterministic and golden") {
    const auto run = twocs::testing::tiny_run();
    CHECK(dot_text(run.graph) == dot_text(run.graph));
    CHECK(json_text(run.graph) == json_text(run.graph));
    twocs::testing::check_golden("dag_tiny.dot", dot_text(run.graph));
    twocs::testing::check_golden("dag_tiny.json", json_text(run.graph));
  }

  TEST_CASE("dag export: an empty graph gives valid output") {
    const twocs::lowering::TaskGraph graph(0);
    const json j = json::parse(json_text(graph));
    CHECK(j["tasks"].empty());
    CHECK(j["dependencies"].empty());
    CHECK(dot_text(graph) == "digraph twocs {\n  rankdir=LR;\n"
                             "  node [shape=box, style=filled, fontname=\"Helvetica\", fontsize=10];\n}\n");
  }
}
