// Workload keys added for NeMo's and Megatron-Core's runs: the squared-ReLU FFN (model.ffn_kind),
// the interleaved schedule's overlapped messages (training.overlap.p2p) and the SMs userbuffers
// withhold from their GEMMs (training.overlap.tp_comm_sm_margin), read and located.
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

namespace {

// One node of 4 T1 devices (test::small_platform's device with 132 SMs), tensor 4 with sequence
// parallelism and Transformer Engine's userbuffers.
const std::string margin_workload = "model: {layers: 2, hidden: 512, heads: 8, vocab: 1000, seq_len: 128}\n"
                                    "training: {global_batch: 8, micro_batch: 1, parallelism: {tensor: 4, "
                                    "pipeline: 1, data: 1, sequence: true}, overlap: {tp_comm: transformer_engine, "
                                    "tp_comm_sm_margin: ";

const std::string margin_platform = "name: tiny\ndevice:\n  name: T1\n  peak_flops: {bf16: 100TFLOP/s}\n"
                                    "  memory: 16GiB\n  memory_bandwidth: 1TB/s\n"
                                    "  operator_model: {compute_units: 132}\n"
                                    "node:\n  devices: 4\n  interconnect: {bandwidth: 100GB/s, latency: 1us}\n"
                                    "cluster:\n  nodes: 1\n  network: {bandwidth: 10GB/s, latency: 5us}\n";

} // namespace

TEST_CASE("overlap.tp_comm_sm_margin is read by Transformer Engine's pair names, 0 by default") {
  const auto w = config::parse_workload({"w.yaml", margin_workload + "{proj_fprop: 24, fc2_fprop: 16}}}\n"});
  CHECK(w.plan.overlap.tp_comm_sm_margin.proj_fprop == 24);
  CHECK(w.plan.overlap.tp_comm_sm_margin.fc2_fprop == 16);
  const auto none = config::parse_workload({"w.yaml", margin_workload + "{}}}\n"});
  CHECK(none.plan.overlap.tp_comm_sm_margin.proj_fprop == 0);
  CHECK(none.plan.overlap.tp_comm_sm_margin.fc2_fprop == 0);
  const auto set = config::parse_workload({"w.yaml", margin_workload + "{}}}\n"},
                                          {"training.overlap.tp_comm_sm_margin.fc2_fprop=8"});
  CHECK(set.plan.overlap.tp_comm_sm_margin.fc2_fprop == 8);
}

TEST_CASE("overlap.tp_comm_sm_margin: an unknown pair, a negative count and a plan without userbuffers are refused") {
  const auto unknown = test::workload_error(margin_workload + "{fc1_fprop: 2}}}\n");
  CHECK(unknown.fix() == "did you mean 'fc2_fprop'?");
  CHECK(test::where(unknown) == "w.yaml:2:168"); // the unknown key
  const auto negative = test::workload_error(margin_workload + "{proj_fprop: -1}}}\n");
  CHECK(test::where(negative) == "w.yaml:2:180"); // the value -1
  const auto without =
      test::workload_error(margin_workload + "{proj_fprop: 24}}}\n", {"training.overlap.tp_comm=none"});
  CHECK(without.key_path() == "training.overlap.tp_comm_sm_margin");
  CHECK(without.fix() == "set training.overlap.tp_comm: transformer_engine, or remove tp_comm_sm_margin");
}

TEST_CASE("overlap.tp_comm_sm_margin must leave the device SMs, and needs its SM count") {
  const std::string yaml = margin_workload + "{proj_fprop: 24, fc2_fprop: 132}}}\n";
  const auto all = test::input_error_of([&] {
    (void)config::load_scenario({"w.yaml", yaml}, {"p.yaml", margin_platform});
  });
  CHECK(all.problem() == "training.overlap.tp_comm_sm_margin withholds 132 SMs, and device T1 has 132");
  CHECK(test::where(all) == "w.yaml:2:148"); // the key tp_comm_sm_margin
  std::string no_count = margin_platform;
  no_count.erase(no_count.find("  operator_model"), std::string("  operator_model: {compute_units: 132}\n").size());
  const auto unknown_count = test::input_error_of([&] {
    (void)config::load_scenario({"w.yaml", yaml}, {"p.yaml", no_count});
  });
  CHECK(unknown_count.problem() == "training.overlap.tp_comm_sm_margin withholds 132 SMs, and device T1 has 0");
  CHECK(unknown_count.fix() == "give the device's SM count, device.operator_model.compute_units, or remove the margin");
  const auto fits = config::load_scenario({"w.yaml", margin_workload + "{proj_fprop: 24, fc2_fprop: 131}}}\n"},
                                          {"p.yaml", margin_platform});
  CHECK(fits.workload.plan.overlap.tp_comm_sm_margin.fc2_fprop == 131);
}
