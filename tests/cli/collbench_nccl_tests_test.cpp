// `twocs collbench` takes nccl-tests' flags and prints nccl-tests' table (NVIDIA/nccl-tests
// src/common.cu, v2.13 to v2.16), so that `twocs collbench -b 8 -e 8G -f 2 -g 8` diffs against an
// `all_reduce_perf -b 8 -e 8G -f 2 -g 8` log column for column.
#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_capture.hpp"

using namespace twocs;
using namespace twocs::test;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string rtrim(std::string s) {
  s.erase(std::find_if(s.rbegin(), s.rend(), [](char c) { return c != ' '; }).base(), s.end());
  return s;
}

std::vector<std::string> fields_of(const std::string& line) {
  std::vector<std::string> fields;
  std::istringstream in(line);
  for (std::string f; in >> f;) fields.push_back(f);
  return fields;
}

/// The table's rows: every line that is not a `#` comment.
std::vector<std::vector<std::string>> rows_of(const std::string& out) {
  std::vector<std::vector<std::string>> rows;
  for (const std::string& line : lines_of(out))
    if (!line.empty() && line[0] != '#') rows.push_back(fields_of(line));
  return rows;
}

/// The number after "# Avg bus bandwidth    : ".
double average_line(const std::string& out) {
  for (const std::string& line : lines_of(out))
    if (line.rfind("# Avg bus bandwidth    : ", 0) == 0) return std::stod(line.substr(25));
  FAIL("no '# Avg bus bandwidth' line in\n" << out);
  return 0;
}

constexpr const char* header = "#       size         count      type   redop    root     time   algbw   busbw #wrong   "
                               "  time   algbw   busbw #wrong";
constexpr const char* units_line = "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)      "
                                   "      (us)  (GB/s)  (GB/s)";

} // namespace

TEST_CASE("collbench -b 8 -e 8G -f 2 -g 8 prints nccl-tests' table: 31 rows and their average bus bandwidth") {
  const TempDir dir("collbench-nccl");
  const auto r = run_command_line({"collbench", "-b", "8", "-e", "8G", "-f", "2", "-g", "8", "--json", dir.file("j")});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const auto lines = lines_of(r.out);
  REQUIRE(lines.size() > 8);
  CHECK(contains(lines[0], "# twocs collbench: all-reduce on 8 devices of "));
  CHECK(contains(r.out, "simulated, not measured"));
  CHECK(contains(r.out, "# nThread 1 nGpus 8 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 1 iters: "
                        "20 agg iters: 1 validation: 0 graph: 0\n"));
  const auto at = std::find(lines.begin(), lines.end(), header);
  REQUIRE(at != lines.end());
  CHECK(rtrim(*(at - 1)) == "#" + std::string(62, ' ') + "out-of-place" + std::string(23, ' ') + "in-place");
  CHECK(rtrim(*(at + 1)) == units_line);
  CHECK((at + 2)->substr(0, 52) == "           8             2     float     sum      -1");

  const auto rows = rows_of(r.out);
  REQUIRE(rows.size() == 31);
  double sum = 0;
  double size = 8;
  for (const auto& row : rows) {
    REQUIRE(row.size() == 13);
    CHECK(std::stod(row[0]) == size);
    CHECK(std::stod(row[1]) == size / 4); // float elements
    CHECK((row[2] == "float" && row[3] == "sum" && row[4] == "-1"));
    CHECK((row[5] == row[9] && row[6] == row[10] && row[7] == row[11])); // in-place as out-of-place
    CHECK((row[8] == "N/A" && row[12] == "N/A"));
    sum += std::stod(row[7]);
    size *= 2;
  }
  // The printed busbw has two decimals: its mean is the average to within 0.005 GB/s.
  CHECK(std::abs(average_line(r.out) - sum / 31) <= 0.005 + 1e-5 * sum / 31);
  double exact = 0;
  const auto j = nlohmann::json::parse(read_text(dir.file("j")));
  for (const auto& row : j["rows"]) exact += row["busbw_GBps"].get<double>();
  CHECK(average_line(r.out) == doctest::Approx(exact / 31).epsilon(1e-5)); // printed with %g: 6 digits
  CHECK(contains(r.out, "\n# Out of bounds values : 0 OK\n# Avg bus bandwidth    : "));
  CHECK(contains(r.out, " \n#\n# Algorithm by size (twocs's choice; nccl-tests prints none):\n#          8 .. "));
}

TEST_CASE("collbench sizes: nccl-tests' 128K, 1M and 8g are powers of 1024, twocs's units keep working") {
  const TempDir dir("collbench-nccl-sizes");
  auto r = run_command_line({"collbench", "-b", "128K", "-e", "1M", "--json", dir.file("a")});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  auto j = nlohmann::json::parse(read_text(dir.file("a")));
  REQUIRE(j["rows"].size() == 4);
  CHECK(j["rows"][0]["size_bytes"].get<double>() == 131072.0);
  CHECK(j["rows"][3]["size_bytes"].get<double>() == 1048576.0);
  r = run_command_line(
      {"collbench", "--minbytes", "8MiB", "--maxbytes", "16m", "--stepfactor", "2", "--json", dir.file("b")});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  j = nlohmann::json::parse(read_text(dir.file("b")));
  REQUIRE(j["rows"].size() == 2);
  CHECK(j["rows"][1]["size_bytes"].get<double>() == 16.0 * 1048576.0);
  r = run_command_line({"collbench", "--min-bytes", "1GB", "--max-bytes", "1GB", "--json", dir.file("c")});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(nlohmann::json::parse(read_text(dir.file("c")))["rows"][0]["size_bytes"].get<double>() == 1e9);
}

TEST_CASE("collbench refuses a bad -b or -e with exit 2, the flag, where it is wrong and the fix") {
  struct Bad {
    std::vector<std::string> args;
    const char* located; // FLAG VALUE:1:COLUMN
    const char* problem;
  };
  const Bad cases[] = {
      {{"-b", "8X"}, "-b 8X:1:2: error: -b/--minbytes: '8X' is not a size: unknown size suffix 'X'", "K, M, G and T"},
      {{"-b", "-1"}, "-b -1:1:1: error: -b/--minbytes: '-1' is -1 bytes", "at least 1 byte"},
      {{"-b", "0"}, "-b 0:1:1: error: -b/--minbytes: '0' is 0 bytes", "at least 1 byte"},
      {{"--minbytes", ""}, "-b :1:1: error: -b/--minbytes: '' is not a size: empty size", "empty size"},
      {{"-e", "1Q"}, "-e 1Q:1:2: error: -e/--maxbytes: '1Q' is not a size", "unknown size suffix 'Q'"},
      {{"--max-bytes", "8 GiBs"}, "-e 8 GiBs:1:3: error: -e/--maxbytes:", "unknown size unit 'GiBs'"},
  };
  for (const Bad& bad : cases) {
    CAPTURE(bad.located);
    std::vector<std::string> args = {"collbench"};
    args.insert(args.end(), bad.args.begin(), bad.args.end());
    const auto r = run_command_line(args);
    CHECK(r.code == 2);
    CHECK(contains(r.err, bad.located));
    CHECK(contains(r.err, bad.problem));
    CHECK(contains(r.err, "fix: write bytes (8), a number with K, M, G or T for powers of 1024 (128K, 1M, 8G)"));
    CHECK(r.out.empty());
  }
}

TEST_CASE("collbench -g is --devices: both may be given only when they agree") {
  const TempDir dir("collbench-nccl-g");
  auto r = run_command_line({"collbench", "-g", "8", "--devices", "16", "--set", "cluster.nodes=2"});
  CHECK(r.code == 2);
  CHECK(contains(r.err, "-g/--ngpus 8 and --devices 16 give two group sizes"));
  CHECK(contains(r.err, "fix: give one of them"));
  r = run_command_line({"collbench", "-g", "4", "--devices", "4", "-b", "1M", "-e", "1M", "--json", dir.file("a")});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const auto both = nlohmann::json::parse(read_text(dir.file("a")));
  r = run_command_line({"collbench", "--ngpus", "4", "-b", "1M", "-e", "1M", "--json", dir.file("b")});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const auto g = nlohmann::json::parse(read_text(dir.file("b")));
  CHECK(g["devices"] == 4);
  CHECK(g["rows"][0]["time_s"] == both["rows"][0]["time_s"]);
  CHECK(contains(r.out, "nGpus 4 "));
  r = run_command_line({"collbench", "-g", "64", "--set", "cluster.nodes=2"});
  CHECK(r.code == 2);
  CHECK(contains(r.err, "-g/--ngpus 64: the platform has 16 devices"));
}

TEST_CASE("collbench echoes -n and -w: the simulation is deterministic, every iteration the same") {
  const auto r = run_command_line({"collbench", "-b", "1M", "-e", "1M", "-n", "50", "--warmup_iters", "3"});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(contains(r.out, "warmup iters: 3 iters: 50 agg iters: 1"));
  CHECK(contains(r.out, "every iteration takes the\n# same time"));
  CHECK(run_command_line({"collbench", "-n", "0"}).code == 2);
  CHECK(run_command_line({"collbench", "-w", "-1"}).code == 2);
}

TEST_CASE("collbench all-gather: nccl-tests' per-rank count, no reduction, the algorithm named after the table") {
  const TempDir dir("collbench-nccl-ag");
  const auto r = run_command_line(
      {"collbench", "--collective", "all-gather", "-b", "1M", "-e", "2M", "-g", "8", "--json", dir.file("a")});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const auto rows = rows_of(r.out);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0][1] == "32768"); // 1 MiB / 4 B / 8 ranks, as all_gather.cu's paramcount
  CHECK(rows[0][3] == "none");
  CHECK(rows[0][4] == "-1");
  CHECK(contains(r.out,
                 "# Algorithm by size (twocs's choice; nccl-tests prints none):\n#    1048576 ..    2097152  ring\n"));
  const auto j = nlohmann::json::parse(read_text(dir.file("a")));
  const auto& row = j["rows"][0];
  for (const char* key : {"size_bytes", "count", "type", "redop", "time_s", "algbw_GBps", "busbw_GBps", "algorithm",
                          "root", "nccl_count"})
    CHECK_MESSAGE(row.contains(key), key);
  CHECK(row["count"].get<double>() == 262144.0); // kept as it was: S / 4
  CHECK(row["nccl_count"] == 32768);
  for (const char* key :
       {"platform", "collective", "devices", "rows", "iters", "warmup_iters", "step_factor", "avg_busbw_GBps"})
    CHECK_MESSAGE(j.contains(key), key);
}

TEST_CASE("collbench broadcast prints root 0 as nccl-tests' default -r") {
  const auto r = run_command_line({"collbench", "--collective", "broadcast", "-b", "1M", "-e", "1M"});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const auto rows = rows_of(r.out);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0][4] == "0");
  CHECK(rows[0][3] == "none");
}
