// Fuzzes the quantity parser (twocs::units::parse_*): every text either parses to a finite
// value or throws UnitError with an offset inside the text.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <twocs/units/parse.hpp>

namespace {

template <class Parse> void check(std::string_view text, Parse parse) {
  try {
    const double value = parse(text).value();
    if (!std::isfinite(value)) std::abort(); // a quantity the simulator could not use
  } catch (const twocs::units::UnitError& e) {
    if (e.offset() > text.size()) std::abort(); // the error must point inside the text
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  check(text, twocs::units::parse_bytes);
  check(text, twocs::units::parse_byte_rate);
  check(text, twocs::units::parse_flops);
  check(text, twocs::units::parse_flop_rate);
  check(text, twocs::units::parse_seconds);
  return 0;
}
