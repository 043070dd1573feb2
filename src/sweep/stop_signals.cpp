#include "stop_signals.hpp"

#include <array>
#include <csignal>
#include <unistd.h>

namespace twocs::sweep::detail {
namespace {

constexpr std::array<int, 3> stopping_signals{SIGINT, SIGTERM, SIGHUP};

volatile std::sig_atomic_t caught_signal = 0;
extern "C" void note_signal(int signal) { caught_signal = signal; }
pid_t watched_parent = 0; // an MPI rank's launcher; 0: none watched
std::array<struct sigaction, stopping_signals.size()> previous{};

} // namespace

StopSignals::StopSignals(bool watch_parent) {
  caught_signal = 0;
  watched_parent = watch_parent ? ::getppid() : 0;
  struct sigaction action {};
  action.sa_handler = note_signal;
  sigemptyset(&action.sa_mask);
  for (std::size_t i = 0; i < stopping_signals.size(); ++i) {
    sigaction(stopping_signals[i], nullptr, &previous[i]);
    if (stopping_signals[i] == SIGHUP && previous[i].sa_handler == SIG_IGN) continue; // nohup
    sigaction(stopping_signals[i], &action, nullptr);
  }
}

StopSignals::~StopSignals() {
  for (std::size_t i = 0; i < stopping_signals.size(); ++i) sigaction(stopping_signals[i], &previous[i], nullptr);
  watched_parent = 0;
}

bool stop_requested() { return caught_signal != 0 || (watched_parent != 0 && ::getppid() != watched_parent); }

int stop_signal() { return caught_signal; }

sigset_t block_stop_signals() {
  sigset_t block, previous_mask;
  sigemptyset(&block);
  for (const int signal : stopping_signals) sigaddset(&block, signal);
  pthread_sigmask(SIG_BLOCK, &block, &previous_mask);
  return previous_mask;
}

void restore_signal_mask(const sigset_t& mask) { pthread_sigmask(SIG_SETMASK, &mask, nullptr); }

void unblock_stop_signals() {
  sigset_t block;
  sigemptyset(&block);
  for (const int signal : stopping_signals) sigaddset(&block, signal);
  sigprocmask(SIG_UNBLOCK, &block, nullptr);
}

void default_stop_signals() {
  for (std::size_t i = 0; i < stopping_signals.size(); ++i) // an ignored SIGHUP (nohup) stays ignored
    ::signal(stopping_signals[i], previous[i].sa_handler == SIG_IGN ? SIG_IGN : SIG_DFL);
}

} // namespace twocs::sweep::detail
