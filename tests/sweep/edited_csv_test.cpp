// A results CSV changed before a resume. A truncated last line (a half row) is dropped with a
// note and its scenario runs again; a line twocs never writes (another field count, an unknown
// status, a scenario twice) is refused with exit 2, naming the line and what to do, and the CSV
// is left as it was (src/sweep/earlier_results.cpp).
#include <doctest/doctest.h>

#include <twocs/config/study.hpp>
#include <twocs/error.hpp>

#include "sweep/columns.hpp"
#include "sweep/results_file.hpp"
#include "sweep/sweep_fixture.hpp"

using namespace twocs::test;
using namespace twocs::sweep::detail;

namespace {

/// The CSV of scenarios 0, 1 and 2 as the sweep writes them (error rows: no summary needed).
std::string three_rows(const twocs::config::Study& study) {
  std::string text = twocs::report::csv_record(csv_header(study));
  for (std::size_t i = 0; i < 3; ++i) {
    ScenarioOutcome outcome;
    outcome.index = i;
    outcome.reason = "a reason";
    text += twocs::report::csv_record(csv_row(study, outcome));
  }
  return text;
}

/// prepare_results on `text`: the error message, empty when it is accepted.
std::string refusal(const StudyFolder& folder, const twocs::config::Study& study, const std::string& text) {
  std::ofstream(folder.csv(), std::ios::trunc) << text;
  try {
    (void)prepare_results(folder.csv(), csv_header(study), study);
  } catch (const twocs::InputError& e) {
    CHECK(file_text(folder.csv()) == text); // left as it was
    return e.message();
  }
  return "";
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

} // namespace

TEST_CASE("each kind of hand-edited line is refused at its line, the CSV left as it was") {
  const StudyFolder folder("edited");
  const twocs::config::Study study = twocs::config::load_study(folder.study());
  const std::string good = three_rows(study);
  const std::string where = folder.csv().string() + ":";
  CHECK(refusal(folder, study, good).empty());

  const std::string fewer = refusal(folder, study, replaced(good, "a reason,", "a reason,x,"));
  CHECK_MESSAGE(contains(fewer, where + "2:1: error: line 2 of '"), fewer);
  const std::size_t columns = csv_header(study).size();
  CHECK_MESSAGE(contains(fewer, "is not a row twocs wrote: it has " + std::to_string(columns + 1) +
                                    " fields, the header " + std::to_string(columns)),
                fewer);
  CHECK_MESSAGE(contains(fewer, "fix: correct the line, or delete it so that scenario 0 runs again; then rerun"),
                fewer);

  const std::string status = refusal(folder, study, replaced(good, "2,128,96,2,error", "2,128,96,2,done"));
  CHECK_MESSAGE(contains(status, where + "4:1: error: "), status);
  CHECK_MESSAGE(contains(status, "status 'done' is not one of ok, oom, infeasible, error, timeout"), status);

  const std::string twice = refusal(folder, study, good + good.substr(good.find('\n') + 1));
  CHECK_MESSAGE(contains(twice, where + "5:1: error: "), twice);
  CHECK_MESSAGE(contains(twice, "scenario 0 is here a second time (first at line 2)"), twice);

  const std::string index = refusal(folder, study, good + "x" + good.substr(good.rfind('\n', good.size() - 2) + 2));
  CHECK_MESSAGE(contains(index, where + "5:1: error: "), index);

  const std::string quote = refusal(folder, study, replaced(good, "a reason", "\"a reason"));
  CHECK_MESSAGE(contains(quote, "it has an unclosed quote"), quote);
}

TEST_CASE("a truncated last line is dropped with a note, and the resumed CSV is the uninterrupted one") {
  const StudyFolder folder("truncated");
  const auto reference = uninterrupted_rows(folder);
  const std::string full = file_text(folder.csv("reference.csv"));
  std::string cut = full.substr(0, full.size() - 1);
  cut = cut.substr(0, cut.rfind('\n') + 1); // eleven rows
  cut += full.substr(cut.size(), 25);       // and a quarter of the twelfth
  std::ofstream(folder.csv()) << cut;
  const fs::path log = folder.root / "resume.log";
  REQUIRE(wait_exit(start_sweep(folder, log)) == 0);
  const std::string message = file_text(log);
  CHECK_MESSAGE(contains(message, "out.csv:13: note: the last line is incomplete"), message);
  CHECK_MESSAGE(contains(message, "dropped, its scenario runs again"), message);
  CHECK_MESSAGE(contains(message, "1 run now, 11 from an earlier run"), message);
  CHECK(without_wall_times(read_results(folder.csv())).rows == reference.rows);
}

TEST_CASE("a hand-edited CSV stops the sweep with exit 2 before any scenario runs") {
  const StudyFolder folder("edited-program");
  const twocs::config::Study study = twocs::config::load_study(folder.study());
  const std::string bad = replaced(three_rows(study), "2,128,96,2,error", "2,128,96,2,fine");
  std::ofstream(folder.csv()) << bad;
  const fs::path log = folder.root / "sweep.log";
  CHECK(wait_exit(start_sweep(folder, log)) == 2);
  const std::string message = file_text(log);
  CHECK_MESSAGE(contains(message, "out.csv:4:1: error: line 4 of '"), message);
  CHECK_MESSAGE(contains(message, "status 'fine' is not one of"), message);
  CHECK(file_text(folder.csv()) == bad);
  CHECK_FALSE(fs::exists(folder.csv("out.csv.lock")));
}
