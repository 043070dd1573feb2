#include <doctest/doctest.h>

#include <string>

#include <twocs/units/parse.hpp>

using namespace twocs::units;

TEST_CASE("sizes: decimal and binary prefixes, bits and bytes") {
  CHECK(parse_bytes("512B").value() == 512.0);
  CHECK(parse_bytes("25MB").value() == 25e6);
  CHECK(parse_bytes("80GiB").value() == 80.0 * 1073741824.0);
  CHECK(parse_bytes("1KiB").value() == 1024.0);
  CHECK(parse_bytes("1kB").value() == 1000.0);
  CHECK(parse_bytes("2TiB").value() == 2.0 * 1099511627776.0);
  CHECK(parse_bytes("1PB").value() == 1e15);
  CHECK(parse_bytes("8b").value() == 1.0);
  CHECK(parse_bytes("200Gb").value() == 25e9);
  CHECK(parse_bytes(" 1.5 GB ").value() == 1.5e9);
  CHECK(parse_bytes("1e3B").value() == 1000.0);
}

TEST_CASE("rates: /s and ps spellings, bits are divided by eight") {
  CHECK(parse_byte_rate("300GB/s").value() == 300e9);
  CHECK(parse_byte_rate("25GBps").value() == 25e9);
  CHECK(parse_byte_rate("200Gb/s").value() == 25e9);
  CHECK(parse_byte_rate("200Gbps").value() == 25e9);
  CHECK(parse_byte_rate("2039GB/s").value() == 2039e9);
  CHECK(parse_byte_rate("1TiB/s").value() == 1099511627776.0);
}

TEST_CASE("compute and compute rates") {
  CHECK(parse_flop_rate("312TFLOP/s").value() == 312e12);
  CHECK(parse_flop_rate("19.5TFLOP/s").value() == 19.5e12);
  CHECK(parse_flop_rate("1.2PFLOP/s").value() == doctest::Approx(1.2e15));
  CHECK(parse_flop_rate("312TFLOPS").value() == 312e12);
  CHECK(parse_flops("1.5TFLOP").value() == 1.5e12);
  CHECK(parse_flops("10GFLOP").value() == 10e9);
}

TEST_CASE("time units") {
  CHECK(parse_seconds("5us").value() == doctest::Approx(5e-6));
  CHECK(parse_seconds("1.5ms").value() == doctest::Approx(1.5e-3));
  CHECK(parse_seconds("10ns").value() == doctest::Approx(10e-9));
  CHECK(parse_seconds("2s").value() == 2.0);
}

namespace {
/// The message and offset of the UnitError that parsing `text` throws.
template <class Parse> std::pair<std::string, std::size_t> failure(Parse parse, const char* text) {
  try {
    (void)parse(text);
  } catch (const UnitError& e) {
    return {e.what(), e.offset()};
  }
  FAIL("expected a UnitError for '" << text << "'");
  return {};
}
} // namespace

TEST_CASE("malformed quantities name the problem and where it is") {
  auto [no_unit, no_unit_at] = failure(parse_byte_rate, "300");
  CHECK(no_unit.find("no unit") != std::string::npos);
  CHECK(no_unit.find("300GB/s") != std::string::npos);
  CHECK(no_unit_at == 3);

  auto [bad, bad_at] = failure(parse_byte_rate, "300GB");
  CHECK(bad.find("unknown bandwidth unit 'GB'") != std::string::npos);
  CHECK(bad_at == 3);

  auto [ambiguous, ambiguous_at] = failure(parse_bytes, "25KB");
  CHECK(ambiguous.find("'k' for 1000 or 'Ki' for 1024") != std::string::npos);
  CHECK(ambiguous_at == 2);

  auto [plural, plural_at] = failure(parse_flop_rate, "312TFLOPs");
  CHECK(plural.find("FLOP/s") != std::string::npos);

  auto [no_number, no_number_at] = failure(parse_seconds, "us");
  CHECK(no_number.find("does not start with a number") != std::string::npos);
  CHECK(no_number_at == 0);

  auto [empty, empty_at] = failure(parse_seconds, "  ");
  CHECK(empty.find("empty") != std::string::npos);

  CHECK_THROWS_AS((void)parse_seconds("5 minutes"), UnitError);
  CHECK_THROWS_AS((void)parse_bytes("5GB/s"), UnitError);
  CHECK_THROWS_AS((void)parse_flops("5TFLOP/s"), UnitError);
  CHECK_THROWS_AS((void)parse_bytes("1..5GB"), UnitError);
}

TEST_CASE("a value that overflows with its prefix is refused, never infinite") {
  auto [huge, huge_at] = failure(parse_bytes, "1e308EB");
  CHECK(huge.find("too large") != std::string::npos);
  CHECK(huge_at == 0);
  CHECK_THROWS_AS((void)parse_byte_rate("1e308EB/s"), UnitError);
  CHECK_THROWS_AS((void)parse_flop_rate("1e300PFLOP/s"), UnitError);
  CHECK_THROWS_AS((void)parse_flops("1e300PFLOP"), UnitError);
  CHECK(parse_bytes("1e300B").value() == 1e300); // finite: the config layer bounds it
}

TEST_CASE("nccl-tests sizes: plain bytes and K, M, G, T as powers of 1024, either case") {
  CHECK(parse_nccl_bytes("8").value() == 8.0);
  CHECK(parse_nccl_bytes("128K").value() == 131072.0);
  CHECK(parse_nccl_bytes("128k").value() == 131072.0);
  CHECK(parse_nccl_bytes("1M").value() == 1048576.0);
  CHECK(parse_nccl_bytes("8G").value() == 8.0 * 1073741824.0);
  CHECK(parse_nccl_bytes("8g").value() == 8.0 * 1073741824.0);
  CHECK(parse_nccl_bytes("2T").value() == 2.0 * 1099511627776.0);
  CHECK(parse_nccl_bytes(" 1.5 M ").value() == 1.5 * 1048576.0);
  CHECK(parse_nccl_bytes("2.5").value() == 2.0); // truncated to whole bytes, as nccl-tests' size_t
  CHECK(parse_nccl_bytes("+16").value() == 16.0);
}

TEST_CASE("nccl-tests sizes: twocs's units keep their meaning, bad text is refused where it is wrong") {
  CHECK(parse_nccl_bytes("8MiB").value() == 8.0 * 1048576.0);
  CHECK(parse_nccl_bytes("1GB").value() == 1e9); // decimal, as everywhere in twocs
  CHECK(parse_nccl_bytes("512B").value() == 512.0);
  CHECK(parse_nccl_bytes("8b").value() == 1.0);  // bits
  CHECK(parse_nccl_bytes("-1").value() == -1.0); // the caller refuses it
  CHECK(parse_nccl_bytes("0").value() == 0.0);

  auto [suffix, suffix_at] = failure(parse_nccl_bytes, "8X");
  CHECK(suffix.find("unknown size suffix 'X'") != std::string::npos);
  CHECK(suffix_at == 1);
  auto [empty, empty_at] = failure(parse_nccl_bytes, "");
  CHECK(empty.find("empty size") != std::string::npos);
  CHECK(empty_at == 0);
  auto [unit, unit_at] = failure(parse_nccl_bytes, "8XB");
  CHECK(unit.find("unknown size unit 'XB'") != std::string::npos);
  CHECK(unit_at == 1);
  CHECK_THROWS_AS((void)parse_nccl_bytes("K"), UnitError);
  CHECK_THROWS_AS((void)parse_nccl_bytes("1.2.3K"), UnitError);
  CHECK_THROWS_AS((void)parse_nccl_bytes("-"), UnitError);
}
