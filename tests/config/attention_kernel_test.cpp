// training.attention_kernel picks which of a platform's measured fused attention implementations
// a workload runs; device.operator_model.attention_kernel is the platform's default
// (hardware/attention_kernel.hpp).
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include <twocs/config/scenario_loader.hpp>
#include <twocs/hardware/attention_kernel.hpp>

#include "config/input_error_capture.hpp"

using namespace twocs;
using test::where;

namespace {

/// small_platform with two fused attention implementations of one forward size, and `extra`
/// lines in its operator_model.
std::string two_kernels(const std::string& extra) {
  std::string yaml = test::small_platform;
  yaml.insert(yaml.find("node:"), "  operator_model:\n" + extra +
                                      "    measured:\n"
                                      "      - {op: flash_forward, shape: \"heads=16,seq=1024,head_dim=64,causal=1\", "
                                      "dtype: bf16, time: 100us, kernel: cudnn}\n"
                                      "      - {op: flash_forward, shape: \"heads=16,seq=1024,head_dim=64,causal=1\", "
                                      "dtype: bf16, time: 150us, kernel: flash2}\n"
                                      "      - {op: gemm, shape: \"m=1024,n=1024,k=1024\", dtype: bf16, time: 30us}\n");
  return yaml;
}

const std::string with_default = two_kernels("    attention_kernel: cudnn\n");

/// The times of the fused attention rows the scenario keeps, in microseconds.
std::vector<long> attention_times(const config::Scenario& s) {
  std::vector<long> times;
  for (const auto& row : s.cluster.device.kernels.measured)
    if (model::is_fused_attention(row.kind)) times.push_back(std::lround(row.time.value() * 1e6));
  return times;
}

} // namespace

TEST_CASE("the platform's default implementation runs unless the workload names another") {
  const auto base = config::load_scenario({"w.yaml", test::small_workload}, {"p.yaml", with_default});
  CHECK(attention_times(base) == std::vector<long>{100});
  const auto flash = config::load_scenario({"w.yaml", test::small_workload + "  attention_kernel: flash2\n"},
                                           {"p.yaml", with_default});
  CHECK(flash.workload.plan.attention_kernel == "flash2");
  CHECK(attention_times(flash) == std::vector<long>{150});
  // Other measured rows stay.
  CHECK(flash.cluster.device.kernels.measured.size() == 2);
  // A platform whose rows name one implementation needs no default.
  std::string one = test::small_platform;
  one.insert(one.find("node:"), "  operator_model:\n    measured:\n"
                                "      - {op: flash_forward, shape: \"heads=16,seq=1024,head_dim=64,causal=1\", "
                                "dtype: bf16, time: 150us, kernel: flash2}\n");
  CHECK(attention_times(config::load_scenario({"w.yaml", test::small_workload}, {"p.yaml", one})) ==
        std::vector<long>{150});
}

TEST_CASE("a workload naming an implementation the platform lacks is located and told the choices") {
  const auto e = test::input_error_of([] {
    (void)config::load_scenario({"w.yaml", test::small_workload + "  attention_kernel: flash3\n"},
                                {"p.yaml", with_default});
  });
  CHECK(where(e) == "w.yaml:14:21");
  CHECK(e.key_path() == "training.attention_kernel");
  CHECK(e.problem() == "training.attention_kernel is 'flash3', but device T1 lists measured attention kernels cudnn, "
                       "flash2");
  CHECK(e.fix() == "choose one of cudnn, flash2, or remove the key for the platform's default");
  // On a platform without measured attention rows there is nothing to choose: the formula runs.
  CHECK_NOTHROW((void)config::load_scenario({"w.yaml", test::small_workload + "  attention_kernel: flash3\n"},
                                            {"p.yaml", test::small_platform}));
}

TEST_CASE("a platform's attention rows need a default when they name several, and one for every row") {
  const auto none = test::platform_error(two_kernels(""));
  CHECK(none.key_path() == "device.operator_model.measured");
  CHECK(none.problem() == "device T1 lists measured attention kernels cudnn, flash2 and nothing chooses one");
  const auto wrong = test::platform_error(two_kernels("    attention_kernel: cudnn9\n"));
  CHECK(wrong.key_path() == "device.operator_model.attention_kernel");
  CHECK(where(wrong) == "p.yaml:8:23");
  CHECK(wrong.fix() == "choose one of cudnn, flash2");
  std::string mixed = with_default;
  mixed.insert(mixed.find("      - {op: gemm"), "      - {op: flash_backward, shape: \"heads=16,seq=1024,head_dim=64,"
                                                "causal=0\", dtype: bf16, time: 300us}\n");
  const auto unnamed = test::platform_error(mixed);
  CHECK(unnamed.problem() == "device T1 has 1 measured attention rows without `kernel:` beside rows of cudnn, flash2");
  std::string on_gemm = with_default;
  on_gemm.replace(on_gemm.find("time: 30us}"), 11, "time: 30us, kernel: cublas}");
  const auto misplaced = test::platform_error(on_gemm);
  CHECK(misplaced.problem() == "device.operator_model.measured[2].kernel names a fused attention implementation, but "
                               "this row's op is gemm");
}

TEST_CASE("a what-if keeps the measured rows, the chosen implementation and the scales it applied") {
  // The rows carry over at their measured/formula ratios (docs/input-formats.md, "What-ifs").
  const auto s =
      config::load_scenario({"w.yaml", test::small_workload + "  attention_kernel: flash2\n"}, {"p.yaml", with_default},
                            {"whatif.compute_scale=2", "whatif.memory_bandwidth_scale=1.5"});
  CHECK(attention_times(s) == std::vector<long>{150});
  CHECK(s.cluster.device.kernels.attention_kernel == "cudnn");
  CHECK(s.cluster.device.kernels.measured_compute_scale == doctest::Approx(2));
  CHECK(s.cluster.device.kernels.measured_memory_scale == doctest::Approx(1.5));
}
