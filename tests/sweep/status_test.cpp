// How a scenario's child process ends becomes its CSV status and reason.
#include <doctest/doctest.h>

#include <csignal>

#include <twocs/sweep/status.hpp>

using namespace twocs::sweep;

TEST_CASE("exit codes map to the contract's statuses") {
  CHECK(classify({0, 0, false}) == Status::ok);
  CHECK(classify({3, 0, false}) == Status::oom);
  CHECK(classify({2, 0, false}) == Status::infeasible);
  CHECK(classify({1, 0, false}) == Status::error);
  CHECK(classify({127, 0, false}) == Status::error);
  CHECK(classify({0, SIGSEGV, false}) == Status::error);
  CHECK(classify({0, SIGKILL, true}) == Status::timeout);
  CHECK(to_string(Status::infeasible) == "infeasible");
}

TEST_CASE("the reason is the first non-empty stderr line, without the program's prefix") {
  CHECK(reason_for({2, 0, false}, "\n  \nw.yaml:3:5: error: bad\n  fix: this\n", 0) == "w.yaml:3:5: error: bad");
  CHECK(reason_for({3, 0, false}, "twocs: error: does not fit\n", 0) == "error: does not fit");
  CHECK(reason_for({0, 0, false}, "", 0).empty());
  CHECK(reason_for({1, 0, false}, "", 0) == "exit code 1 with no message");
  CHECK(reason_for({0, SIGSEGV, false}, "", 0).find("signal 11") != std::string::npos);
  CHECK(reason_for({0, SIGKILL, true}, "partial", 30).find("30 s") != std::string::npos);
}
