// `twocs run --trace FILE`: the extension picks the format; any other is bad input (exit 2) that
// names --trace, the accepted extensions and the fix, before anything is simulated.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include <twocs/error.hpp>

#include "cli/cli_capture.hpp"
#include "cli/trace_options.hpp"

using twocs::test::contains;
using twocs::test::TempDir;

TEST_CASE("--trace: an unknown extension is bad input naming the flag, the formats and the fix") {
  TempDir dir("trace-format");
  const auto target = dir.file("timeline.txt");
  const auto r = twocs::test::run_command_line(twocs::test::small_run({"--quiet", "--trace", target}));
  CHECK(r.code == 2);
  CHECK(contains(r.err, "--trace"));
  CHECK(contains(r.err, ".json.gz"));
  CHECK(contains(r.err, ".pftrace"));
  CHECK(contains(r.err, "fix: "));
  CHECK_FALSE(std::filesystem::exists(target));
}

TEST_CASE("--trace: the parser maps each extension to its format") {
  using twocs::report::TraceFormat;
  CHECK(twocs::cli::parse_trace_format("a/b.json") == TraceFormat::chrome_json);
  CHECK(twocs::cli::parse_trace_format("b.json.gz") == TraceFormat::chrome_json_gzip);
  CHECK(twocs::cli::parse_trace_format("b.pftrace") == TraceFormat::perfetto);
  CHECK_THROWS_AS((void)twocs::cli::parse_trace_format("b.perfetto"), twocs::InputError);
}
