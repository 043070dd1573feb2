// The results CSV's records: quoting that survives commas and quotes, read back as written.
#include <doctest/doctest.h>

#include <twocs/report/results_csv.hpp>

using namespace twocs::report;

TEST_CASE("records quote commas and quotes and read back as written") {
  const std::vector<std::string> fields{"3", "[1, 3]", "say \"hi\"", "", "line\nbreak"};
  const std::string record = csv_record(fields);
  CHECK(record == "3,\"[1, 3]\",\"say \"\"hi\"\"\",,line break\n");
  bool ok = false;
  const auto back = parse_csv_record(record.substr(0, record.size() - 1), ok);
  CHECK(ok);
  CHECK(back == std::vector<std::string>{"3", "[1, 3]", "say \"hi\"", "", "line break"});
}

TEST_CASE("rows whose field count differs from the header's are skipped and counted") {
  std::size_t skipped = 0;
  const auto table = parse_results_csv("scenario,status\n0,ok\n1\n2,\"open\n3,error\n", &skipped);
  CHECK(table.columns == std::vector<std::string>{"scenario", "status"});
  REQUIRE(table.rows.size() == 2);
  CHECK(table.rows[1][0] == "3");
  CHECK(skipped == 2);
  CHECK(table.column("status") == 1);
  CHECK(table.column("absent") == 2);
}
