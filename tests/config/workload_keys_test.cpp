// Workload keys added for NeMo's and Megatron-Core's runs: the squared-ReLU FFN (model.ffn_kind)
// and the interleaved schedule's overlapped messages (training.overlap.p2p), read and located.
#include <doctest/doctest.h>

#include <string>

#include <twocs/config/scenario_loader.hpp>

#include "config/input_error_capture.hpp"

using namespace twocs;

TEST_CASE("ffn_kind: squared_relu is read, and an unknown FFN kind names the choices at its place") {
  const std::string model = "model: {layers: 2, hidden: 512, heads: 8, ffn_kind: ";
  const std::string rest = ", vocab: 1000, seq_len: 128}\ntraining: {global_batch: 8, micro_batch: 1, "
                           "parallelism: {tensor: 1, pipeline: 1, data: 1}}\n";
  const auto w = config::parse_workload({"w.yaml", model + "squared_relu" + rest});
  CHECK(w.model.ffn_kind == model::FfnKind::squared_relu);
  CHECK(to_string(w.model.ffn_kind) == "squared_relu");
  const auto bad = test::workload_error(model + "relu2" + rest);
  CHECK(std::string(bad.what()).find("squared_relu") != std::string::npos);
  CHECK(test::where(bad) == "w.yaml:1:53");
}

TEST_CASE("overlap.p2p is read, off by default as in Megatron-Core's ModelParallelConfig") {
  const std::string base = "model: {layers: 4, hidden: 512, heads: 8, vocab: 1000, seq_len: 128}\ntraining: "
                           "{global_batch: 8, micro_batch: 1, parallelism: {tensor: 1, pipeline: 2, data: 1, "
                           "virtual_stages: 2}";
  CHECK_FALSE(config::parse_workload({"w.yaml", base + "}\n"}).plan.overlap.p2p);
  CHECK(config::parse_workload({"w.yaml", base + ", overlap: {p2p: true}}\n"}).plan.overlap.p2p);
  CHECK(config::parse_workload({"w.yaml", base + "}\n"}, {"training.overlap.p2p=true"}).plan.overlap.p2p);
  const auto bad = test::workload_error(base + ", overlap: {p2p: 2}}\n");
  CHECK(test::where(bad) == "w.yaml:2:127"); // the value 2
}
