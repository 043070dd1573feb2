// Fuzzes --set: each line of the input is one KEY=VALUE override of the embedded default
// scenario, then the whole scenario is read and checked. Any outcome but a scenario or an
// InputError is a finding.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <twocs/config/scenario_loader.hpp>
#include <twocs/error.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const twocs::config::InputText workload = twocs::config::embedded_default_workload();
  static const twocs::config::InputText platform = twocs::config::embedded_default_platform();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> overrides;
  std::size_t start = 0;
  while (start <= text.size() && overrides.size() < 16) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    overrides.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  try {
    (void)twocs::config::load_scenario(workload, platform, overrides);
  } catch (const twocs::InputError&) {
  }
  return 0;
}
