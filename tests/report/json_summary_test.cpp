#include <twocs/report/json_summary.hpp>

#include <limits>
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "report/report_fixtures.hpp"
#include "support/golden.hpp"

using nlohmann::json;
using twocs::report::json_summary;

TEST_SUITE("json summary") {
  TEST_CASE("json summary: every contract field exists with its type") {
    const json j = json::parse(json_summary(twocs::testing::tiny_summary()));
    for (const char* key : {"iteration_time_s", "comm_fraction", "exposed_comm_fraction",
                            "model_flops_per_device_per_s", "mfu", "wall_time_s"}) {
      INFO(key);
      REQUIRE(j.contains(key));
      CHECK(j[key].is_number_float());
    }
    CHECK(j.at("world_size").is_number_integer());
    CHECK(j.at("simulated_tasks").is_number_integer());
    for (const char* key : {"compute", "exposed_comm", "overlapped_comm", "idle"}) {
      INFO(key);
      CHECK(j.at("breakdown_s").at(key).is_number_float());
    }
    for (const char* key : {"tensor", "pipeline", "data"}) {
      INFO(key);
      CHECK(j.at("exposed_comm_by_kind_s").at(key).is_number_float());
    }
    CHECK(j.at("memory").at("peak_bytes").is_number_integer());
    CHECK(j.at("memory").at("capacity_bytes").is_number_integer());
    CHECK(j.at("memory").at("fits").is_boolean());
  }

  TEST_CASE("json summary: values come from the summary") {
    const auto s = twocs::testing::tiny_summary();
    const json j = json::parse(json_summary(s));
    CHECK(j["iteration_time_s"].get<double>() == s.iteration_time.value());
    CHECK(j["world_size"].get<std::int64_t>() == 2);
    CHECK(j["breakdown_s"]["compute"].get<double>() == 3.5e-3);
    CHECK(j["breakdown_s"]["exposed_comm"].get<double>() == 1e-3);
    CHECK(j["breakdown_s"]["overlapped_comm"].get<double>() == 2e-4);
    CHECK(j["breakdown_s"]["idle"].get<double>() == 2e-3);
    CHECK(j["exposed_comm_by_kind_s"]["tensor"].get<double>() == 2.5e-4);
    CHECK(j["exposed_comm_by_kind_s"]["pipeline"].get<double>() == 2.5e-4);
    CHECK(j["exposed_comm_by_kind_s"]["data"].get<double>() == 5e-4);
    CHECK(j["comm_fraction"].get<double>() == s.comm_fraction); // full round-trip precision
    CHECK(j["exposed_comm_fraction"].get<double>() == s.exposed_comm_fraction);
    CHECK(j["model_flops_per_device_per_s"].get<double>() == s.model_flops_per_device.value());
    CHECK(j["mfu"].get<double>() == s.mfu);
    CHECK(j["memory"]["peak_bytes"].get<std::int64_t>() == static_cast<std::int64_t>(s.memory.peak.value()));
    CHECK(j["memory"]["capacity_bytes"].get<std::int64_t>() == 85899345920);
    CHECK(j["memory"]["fits"].get<bool>());
    CHECK(j["simulated_tasks"].get<std::uint64_t>() == 1234567);
    CHECK(j["wall_time_s"].get<double>() == 0.25);
  }

  TEST_CASE("json summary: extras") {
    const json j = json::parse(json_summary(twocs::testing::tiny_summary()));
    CHECK(j["workload"] == "gpt-tiny");
    CHECK(j["platform"] == "toy-cluster");
    CHECK(j["measured_device"] == 1);
    CHECK(j["comm_busy_s"].get<double>() == 1.2e-3);
    CHECK(j["comm_busy_by_kind_s"]["data"].get<double>() == 7e-4);
    CHECK(j["model_flops"].get<double>() == 1e12);
    const auto& stages = j["memory"]["stages"];
    REQUIRE(stages.size() == 2);
    CHECK(stages[1]["stage"] == 1);
    CHECK(stages[1]["layers"] == 12);
    CHECK(stages[1]["micro_batches_in_flight"] == 3);
    for (const char* key : {"weights_bytes", "gradients_bytes", "optimizer_state_bytes", "activations_bytes",
                            "communication_buffers_bytes", "total_bytes"}) {
      INFO(key);
      CHECK(stages[0][key].is_number_integer());
    }
    CHECK(stages[0]["total_bytes"] == j["memory"]["peak_bytes"]);
  }

  TEST_CASE("json summary: keys in the documented order") {
    const std::string text = json_summary(twocs::testing::tiny_summary());
    std::size_t last = 0;
    for (const char* key :
         {"\"workload\"", "\"platform\"", "\"iteration_time_s\"", "\"world_size\"", "\"measured_device\"",
          "\"breakdown_s\"", "\"exposed_comm_by_kind_s\"", "\"comm_busy_s\"", "\"comm_busy_by_kind_s\"",
          "\"comm_fraction\"", "\"exposed_comm_fraction\"", "\"model_flops\"", "\"model_flops_per_device_per_s\"",
          "\"mfu\"", "\"memory\"", "\"simulated_tasks\"", "\"wall_time_s\""}) {
      INFO(key);
      const auto at = text.find(key);
      REQUIRE(at != std::string::npos);
      CHECK(at >= last);
      last = at;
    }
  }

  TEST_CASE("json summary: deterministic, pretty and golden") {
    const auto s = twocs::testing::tiny_summary();
    const std::string first = json_summary(s);
    CHECK(first == json_summary(s));
    CHECK(first.find("\n  \"iteration_time_s\": ") != std::string::npos); // two-space indent
    CHECK(first.back() == '\n');
    twocs::testing::check_golden("summary_tiny.json", first);
  }

  TEST_CASE("json summary: values that are not finite are written as null") {
    auto s = twocs::testing::tiny_summary();
    s.mfu = std::numeric_limits<double>::quiet_NaN();
    s.comm_fraction = std::numeric_limits<double>::infinity();
    s.memory.peak = twocs::units::bytes(std::numeric_limits<double>::infinity());
    const json j = json::parse(json_summary(s));
    CHECK(j["mfu"].is_null());
    CHECK(j["comm_fraction"].is_null());
    CHECK(j["memory"]["peak_bytes"].is_null());
  }

  TEST_CASE("json summary: names with quotes and invalid UTF-8 still give valid JSON") {
    auto s = twocs::testing::tiny_summary();
    s.workload_name = "a \"quoted\"\\name\n";
    s.platform_name = "bad \xff byte";
    const json j = json::parse(json_summary(s));
    CHECK(j["workload"] == "a \"quoted\"\\name\n");
  }
}
