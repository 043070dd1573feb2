// Fuzzes the Hugging Face config importer (`twocs import hf`): any text is either a model it
// maps to a workload or an InputError naming the field it cannot map.
#include <cstddef>
#include <cstdint>
#include <string>

#include <twocs/config/hf_import.hpp>
#include <twocs/error.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)twocs::config::import_hf_config(std::string(reinterpret_cast<const char*>(data), size), "config.json");
  } catch (const twocs::InputError&) {
  }
  return 0;
}
