// training.host.cuda_graphs (none | partial | full) and training.parallelism.sync_free_dispatch:
// read with their defaults, and the values and combinations no CUDA graph can run refused at
// the key, with the fix.
#include <doctest/doctest.h>

#include <string>

#include <twocs/config/scenario_loader.hpp>

#include "config/input_error_capture.hpp"

using namespace twocs;
using test::where;

namespace {

/// A small MoE workload with expert parallelism 2 (its host mapping last, at line 14).
const std::string moe_workload = R"(model:
  layers: 4
  hidden: 512
  heads: 8
  vocab: 1000
  seq_len: 128
  moe: {experts: 8, top_k: 2, expert_ffn_hidden: 1024}
training:
  global_batch: 8
  micro_batch: 1
  parallelism: {tensor: 1, pipeline: 1, data: 2, expert: 2}
)";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

} // namespace

TEST_CASE("training.host.cuda_graphs is none by default and reads partial and full") {
  CHECK(config::parse_workload({"w.yaml", test::small_workload}).plan.host.cuda_graphs == model::CudaGraphs::none);
  const auto partial = config::parse_workload({"w.yaml", test::small_workload + "  host: {cuda_graphs: partial}\n"});
  CHECK(partial.plan.host.cuda_graphs == model::CudaGraphs::partial);
  const auto full = config::parse_workload({"w.yaml", test::small_workload}, {"training.host.cuda_graphs=full"});
  CHECK(full.plan.host.cuda_graphs == model::CudaGraphs::full);
  CHECK_FALSE(config::parse_workload({"w.yaml", moe_workload}).plan.parallelism.sync_free_dispatch);
}

TEST_CASE("an unknown cuda_graphs value is refused at its value, with the nearest name") {
  const auto e = test::workload_error(test::small_workload + "  host: {cuda_graphs: parital}\n");
  CHECK(where(e) == "w.yaml:14:23");
  CHECK(contains(e.problem(), "training.host.cuda_graphs cannot be 'parital'"));
  CHECK(contains(e.problem(), "none, partial, full"));
  CHECK(contains(e.fix(), "partial"));
}

TEST_CASE("cuda_graphs full with a MoE dispatcher that synchronises the host is refused, naming the sync-free option") {
  const auto e = test::workload_error(moe_workload + "  host: {cuda_graphs: full}\n");
  CHECK(e.key_path() == "training.host.cuda_graphs");
  CHECK(where(e) == "w.yaml:12:23");
  CHECK(contains(e.problem(), "the MoE dispatcher synchronises the host"));
  CHECK(contains(e.fix(), "sync_free_dispatch: true"));
  CHECK(contains(e.fix(), "cuda_graphs: partial"));
  // Partial graphs keep the dispatch eager; a sync-free dispatcher makes a full graph legal.
  CHECK_NOTHROW(config::parse_workload({"w.yaml", moe_workload + "  host: {cuda_graphs: partial}\n"}));
  const auto sync_free = config::parse_workload(
      {"w.yaml", moe_workload + "  host: {cuda_graphs: full}\n"},
      {"training.parallelism.expert_dispatcher=hybridep", "training.parallelism.sync_free_dispatch=true"});
  CHECK(sync_free.plan.parallelism.sync_free_dispatch);
  CHECK(sync_free.plan.host.cuda_graphs == model::CudaGraphs::full);
}

TEST_CASE("sync_free_dispatch needs experts and a dispatcher that learns the counts on the device") {
  const auto dense = test::workload_error(test::small_workload, {"training.parallelism.sync_free_dispatch=true"});
  CHECK(dense.key_path() == "training.parallelism.sync_free_dispatch");
  CHECK(contains(dense.problem(), "the model has no experts"));
  const auto all_to_all = test::workload_error(moe_workload, {"training.parallelism.sync_free_dispatch=true"});
  CHECK(all_to_all.key_path() == "training.parallelism.sync_free_dispatch");
  CHECK_FALSE(where(all_to_all).empty());
  CHECK(contains(all_to_all.fix(), "expert_dispatcher: hybridep"));
}

TEST_CASE("per-layer graphs refuse full recomputation, and graphs need Megatron-LM") {
  const auto recompute =
      test::workload_error(test::small_workload, {"training.recompute=full", "training.host.cuda_graphs=partial"});
  CHECK(recompute.key_path() == "training.host.cuda_graphs");
  CHECK(contains(recompute.problem(), "cannot run with full recomputation"));
  CHECK_NOTHROW(config::parse_workload({"w.yaml", test::small_workload},
                                       {"training.recompute=full", "training.host.cuda_graphs=full"}));
  const auto fsdp =
      test::workload_error(test::small_workload, {"training.framework=fsdp", "training.host.cuda_graphs=partial"});
  CHECK(fsdp.key_path() == "training.host.cuda_graphs");
  CHECK(contains(fsdp.problem(), "but training.framework is fsdp"));
}

TEST_CASE("fused_permute_pad is on by default, reads false for DeepEP and is refused for other dispatchers") {
  CHECK(config::parse_workload({"w.yaml", moe_workload}).plan.parallelism.fused_permute_pad);
  const auto deepep =
      config::parse_workload({"w.yaml", moe_workload}, {"training.parallelism.expert_dispatcher=deepep",
                                                        "training.parallelism.fused_permute_pad=false"});
  CHECK_FALSE(deepep.plan.parallelism.fused_permute_pad);
  for (const char* dispatcher : {"all_to_all", "hybridep"}) {
    INFO(dispatcher);
    const auto e =
        test::workload_error(moe_workload, {std::string("training.parallelism.expert_dispatcher=") + dispatcher,
                                            "training.parallelism.fused_permute_pad=false"});
    CHECK(e.key_path() == "training.parallelism.fused_permute_pad");
    CHECK_FALSE(where(e).empty());
    CHECK(contains(e.problem(), "the expert dispatcher is not DeepEP"));
    CHECK(contains(e.fix(), "expert_dispatcher: deepep"));
  }
}
