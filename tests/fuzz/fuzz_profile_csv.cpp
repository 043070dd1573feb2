// Fuzzes the profile CSV reader of `twocs calibrate`: any text is rows or an InputError.
#include <cstddef>
#include <cstdint>
#include <string>

#include <twocs/config/profile_csv.hpp>
#include <twocs/error.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)twocs::config::parse_profile_csv({"fuzz.csv", std::string(reinterpret_cast<const char*>(data), size)});
  } catch (const twocs::InputError&) {
  }
  return 0;
}
