// Fuzzes the workload reader: any text is either a valid workload or an InputError.
#include <cstddef>
#include <cstdint>
#include <string>

#include <twocs/config/scenario_loader.hpp>
#include <twocs/error.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)twocs::config::parse_workload({"fuzz.yaml", std::string(reinterpret_cast<const char*>(data), size)});
  } catch (const twocs::InputError&) {
  }
  return 0;
}
