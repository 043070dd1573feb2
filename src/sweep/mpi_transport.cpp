#ifdef TWOCS_HAVE_MPI
#include "mpi_transport.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <mpi.h>

namespace twocs::sweep::detail {
namespace {

enum Tag : int { request = 1, result, stopped, assign, done, stop, abort };

void send(int to, Tag tag, const void* data = nullptr, int bytes = 0) {
  MPI_Send(data, bytes, MPI_BYTE, to, tag, MPI_COMM_WORLD);
}

/// The next message for this rank from `from` (MPI_ANY_SOURCE: anyone), if one has arrived.
struct Message {
  int from = 0;
  Tag tag = request;
  std::string body;
};
std::optional<Message> receive(int from) {
  int flag = 0;
  MPI_Status status;
  MPI_Iprobe(from, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
  if (!flag) return std::nullopt;
  int bytes = 0;
  MPI_Get_count(&status, MPI_BYTE, &bytes);
  Message m{status.MPI_SOURCE, static_cast<Tag>(status.MPI_TAG), std::string(static_cast<std::size_t>(bytes), '\0')};
  MPI_Recv(m.body.data(), bytes, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return m;
}

/// How long rank 0 waits for the other ranks to confirm a stop; past it, mpirun's own
/// teardown (SIGTERM, then SIGKILL) has the last word.
constexpr auto stop_wait = std::chrono::seconds(10);

class CoordinatorTransport final : public Transport {
public:
  explicit CoordinatorTransport(LocalTransport& own) : own_(own) {
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    workers_.resize(static_cast<std::size_t>(size));
  }
  void serve() override {
    while (const std::optional<Message> m = receive(MPI_ANY_SOURCE)) handle(*m);
  }
  [[nodiscard]] std::optional<std::size_t> take() override { return own_.take(); }
  void finished(const FinishedScenario& scenario) override { own_.finished(scenario); }
  [[nodiscard]] bool drained() const override {
    if (!own_.drained()) return false;
    for (std::size_t w = 1; w < workers_.size(); ++w)
      if (!workers_[w].released || workers_[w].running > 0) return false;
    return true;
  }
  [[nodiscard]] bool stop_requested() const override { return stop_; }
  void stopping() override { stop_workers(Tag::stop); }
  /// Rank 0 failed (it reports why): the other ranks stop and leave without a message of theirs.
  void failing() { stop_workers(Tag::abort); }

private:
  void stop_workers(Tag how);
  struct Worker {
    bool released = false; // told `done`
    bool stopped = false;  // said `stopped`
    std::size_t running = 0;
  };
  void handle(const Message& m);
  LocalTransport& own_;
  std::vector<Worker> workers_; // by rank; [0] unused
  bool stop_ = false;
};

void CoordinatorTransport::handle(const Message& m) {
  Worker& w = workers_[static_cast<std::size_t>(m.from)];
  if (m.tag == Tag::stopped) {
    w.stopped = true;
    stop_ = true; // a rank stopped (a signal): the whole job stops, to be resumed as a whole
  } else if (stop_ || w.stopped) {
    return; // rows and requests after a stop are dropped; a rerun runs those scenarios
  } else if (m.tag == Tag::request) {
    if (const std::optional<std::size_t> index = own_.take()) {
      const auto wire = static_cast<std::uint64_t>(*index);
      send(m.from, Tag::assign, &wire, sizeof wire);
      ++w.running;
    } else {
      send(m.from, Tag::done);
      w.released = true;
    }
  } else if (m.tag == Tag::result) {
    --w.running;
    own_.finished(decode(m.body));
  }
}

void CoordinatorTransport::stop_workers(Tag how) {
  stop_ = true;
  std::vector<int> waiting;
  for (std::size_t r = 1; r < workers_.size(); ++r)
    if (!workers_[r].stopped && !(workers_[r].released && workers_[r].running == 0)) {
      send(static_cast<int>(r), how);
      waiting.push_back(static_cast<int>(r));
    }
  const auto deadline = std::chrono::steady_clock::now() + stop_wait;
  while (!waiting.empty() && std::chrono::steady_clock::now() < deadline) {
    if (const std::optional<Message> m = receive(MPI_ANY_SOURCE)) {
      if (m->tag == Tag::stopped) std::erase(waiting, m->from); // earlier results were drained and dropped
      continue;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

class WorkerTransport final : public Transport {
public:
  explicit WorkerTransport(SweepTotals& totals) : totals_(totals) {}
  void serve() override;
  [[nodiscard]] std::optional<std::size_t> take() override;
  void finished(const FinishedScenario& scenario) override {
    const std::string message = encode(scenario);
    send(0, Tag::result, message.data(), static_cast<int>(message.size()));
    ++totals_.ran;
    if (scenario.status != "ok") ++totals_.failed;
  }
  [[nodiscard]] bool drained() const override { return released_ && assigned_.empty(); }
  [[nodiscard]] bool stop_requested() const override { return stop_; }
  void stopping() override { send(0, Tag::stopped); }
  /// Rank 0 failed and stopped the job (Tag::abort): its message says why.
  [[nodiscard]] bool coordinator_failed() const { return coordinator_failed_; }

private:
  SweepTotals& totals_;
  std::vector<std::size_t> assigned_;
  bool requested_ = false, released_ = false, stop_ = false, coordinator_failed_ = false;
};

void WorkerTransport::serve() {
  while (const std::optional<Message> m = receive(0)) {
    if (m->tag == Tag::assign) {
      std::uint64_t wire = 0;
      std::memcpy(&wire, m->body.data(), std::min(sizeof wire, m->body.size()));
      assigned_.push_back(static_cast<std::size_t>(wire));
      requested_ = false;
    } else if (m->tag == Tag::done) {
      released_ = true;
      requested_ = false;
    } else if (m->tag == Tag::stop || m->tag == Tag::abort) {
      stop_ = true;
      coordinator_failed_ = coordinator_failed_ || m->tag == Tag::abort;
    }
  }
}

std::optional<std::size_t> WorkerTransport::take() {
  if (!assigned_.empty()) {
    const std::size_t index = assigned_.back();
    assigned_.pop_back();
    return index;
  }
  if (!requested_ && !released_) {
    send(0, Tag::request);
    requested_ = true;
  }
  return std::nullopt;
}

} // namespace

bool run_mpi_coordinator(const config::Study& study, const SweepOptions& options, LocalTransport& own, StopCheck stop) {
  CoordinatorTransport transport(own);
  try {
    return run_loop(study, options, transport, stop);
  } catch (...) {
    transport.failing(); // the CSV cannot take rows (a full disk): the other ranks stop first
    throw;
  }
}

bool run_mpi_worker(const config::Study& study, const SweepOptions& options, SweepTotals& totals, StopCheck stop) {
  WorkerTransport transport(totals);
  try {
    const bool interrupted = run_loop(study, options, transport, stop);
    // Rank 0's exit code is the job's: this rank leaves as a peer of a failed rank, not as one
    // interrupted (mpirun reports whichever non-zero code comes first).
    if (transport.coordinator_failed()) throw PeerFailed("MPI rank 0 failed; its message says why");
    return interrupted;
  } catch (const PeerFailed&) {
    throw;
  } catch (...) {
    transport.stopping(); // this rank cannot go on (its scratch disk full): rank 0 stops the job
    throw;
  }
}

std::string encode(const FinishedScenario& s) {
  std::string message;
  const auto field = [&message](std::string_view text) { message += fmt::format("{}:{}", text.size(), text); };
  field(fmt::to_string(s.index));
  field(s.status);
  field(s.reason);
  field(fmt::to_string(s.wall_time_s)); // shortest text that reads back to the same double
  field(fmt::to_string(s.stopped_by));
  for (const std::string& cell : s.row) field(cell);
  return message;
}

FinishedScenario decode(const std::string& message) {
  std::vector<std::string> fields;
  for (std::size_t at = 0; at < message.size();) {
    std::size_t length = 0;
    const char* colon = std::from_chars(message.data() + at, message.data() + message.size(), length).ptr;
    const auto start = static_cast<std::size_t>(colon - message.data()) + 1;
    if (colon == message.data() + message.size() || *colon != ':' || start + length > message.size())
      throw std::runtime_error("twocs sweep: a malformed message between MPI ranks");
    fields.push_back(message.substr(start, length));
    at = start + length;
  }
  if (fields.size() < 5) throw std::runtime_error("twocs sweep: a short message between MPI ranks");
  FinishedScenario s;
  std::from_chars(fields[0].data(), fields[0].data() + fields[0].size(), s.index);
  s.status = fields[1];
  s.reason = fields[2];
  std::from_chars(fields[3].data(), fields[3].data() + fields[3].size(), s.wall_time_s);
  std::from_chars(fields[4].data(), fields[4].data() + fields[4].size(), s.stopped_by);
  s.row.assign(fields.begin() + 5, fields.end());
  return s;
}

} // namespace twocs::sweep::detail
#endif
