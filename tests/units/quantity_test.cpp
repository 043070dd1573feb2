#include <doctest/doctest.h>

#include <type_traits>

#include <twocs/units/format.hpp>
#include <twocs/units/quantity.hpp>

using namespace twocs::units;
using namespace twocs::units::literals;

// Only physically meaningful arithmetic compiles: checked at compile time.
template <class A, class B>
concept Addable = requires(A a, B b) {
  a + b;
};
static_assert(Addable<Bytes, Bytes>);
static_assert(!Addable<Bytes, Seconds>);
static_assert(!Addable<Flops, Bytes>);
static_assert(!Addable<Bytes, double>);
static_assert(std::is_same_v<decltype(Bytes{} / ByteRate{}), Seconds>);
static_assert(std::is_same_v<decltype(Flops{} / FlopRate{}), Seconds>);
static_assert(std::is_same_v<decltype(Bytes{} / Seconds{}), ByteRate>);
static_assert(std::is_same_v<decltype(ByteRate{} * Seconds{}), Bytes>);
static_assert(std::is_same_v<decltype(Flops{} / Bytes{}), ArithmeticIntensity>);
static_assert(std::is_same_v<decltype(Bytes{} / Bytes{}), double>);
static_assert(!std::is_convertible_v<double, Bytes>, "no implicit construction from a bare number");

TEST_CASE("quantities divide into the expected times and rates") {
  const Bytes gigabyte = 1_GB;
  const ByteRate link = 100_GBps;
  CHECK((gigabyte / link).value() == doctest::Approx(0.01));
  CHECK((312_TFLOPps * 2_s).value() == doctest::Approx(624e12));
  CHECK(80_GiB == Bytes(80.0 * 1024 * 1024 * 1024));
  CHECK(1500_us == 1.5_ms);
  CHECK(max(1_s, 2_s) == 2_s);
  CHECK(min(1_GB, 2_GB) == 1_GB);
  Seconds t = 1_ms;
  t += 2_ms;
  t *= 2;
  CHECK(t == 6_ms);
  CHECK((2_GB / 1_GB) == doctest::Approx(2.0));
}

TEST_CASE("quantities print with a readable unit") {
  CHECK(to_string(Seconds(0.0123)) == "12.3 ms");
  CHECK(to_string(Seconds(2.5)) == "2.5 s");
  CHECK(to_string(Seconds(4e-6)) == "4 us");
  CHECK(to_string(80_GiB) == "80 GiB");
  CHECK(to_string(300_GBps) == "300 GB/s");
  CHECK(to_string(312_TFLOPps) == "312 TFLOP/s");
  CHECK(to_string(Seconds(0)) == "0 s");
  CHECK(to_string(Seconds(9.7e-17)) == "0 s"); // rounding residue, not a duration
  CHECK(to_string(Seconds(2e-12)) == "0.002 ns");
}
