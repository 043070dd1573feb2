// DualPipe's eight steps (deepseek-ai/DualPipe, dualpipe/dualpipe.py, DualPipe.step), as work
// items. Each rank sees its two chunks as phases: on the first half of the ranks phase 0 is the
// forward direction, on the second half the reverse one. A backward with zero bubble enabled
// defers its weight gradients (WeightGradStore) to a later W, first in first out.
#include "dualpipe_schedule.hpp"

#include <array>
#include <cassert>
#include <deque>

namespace twocs::lowering::detail {
namespace {

class DualPipeOrder {
public:
  DualPipeOrder(std::int64_t p, std::int64_t m, std::int64_t rank)
      : second_half_(rank >= p / 2 ? 1 : 0), half_m_(m / 2) {}

  void forward(int phase) {
    const std::int64_t slot = phase ^ second_half_;
    items_.push_back({WorkKind::forward, slot * half_m_ + forwards_[static_cast<std::size_t>(slot)]++, slot});
  }
  void backward(int phase, bool zero_bubble) {
    const std::int64_t slot = phase ^ second_half_;
    WorkItem b{WorkKind::backward, slot * half_m_ + backwards_[static_cast<std::size_t>(slot)]++, slot};
    b.weight_deferred = zero_bubble;
    if (zero_bubble) deferred_.push_back(b);
    items_.push_back(b);
  }
  /// _weight_chunk: the oldest deferred weight gradients.
  void weight() {
    assert(!deferred_.empty());
    items_.push_back({WorkKind::weight, deferred_.front().micro_batch, deferred_.front().chunk});
    deferred_.pop_front();
  }
  /// _forward_backward_chunk: a forward of one phase overlapped with a backward of the other.
  void overlapped(int forward_phase, int backward_phase) {
    forward(forward_phase);
    items_.back().exchange_after = false;
    items_.back().merged_with_next = true;
    backward(backward_phase, false);
  }
  /// Step 4's first pair on the two middle ranks: not overlapped, exchanged together.
  void unmerged_pair(int forward_phase, int backward_phase) {
    forward(forward_phase);
    items_.back().exchange_after = false;
    backward(backward_phase, false);
  }

  [[nodiscard]] std::vector<WorkItem> take() {
    assert(deferred_.empty());
    return std::move(items_);
  }

private:
  int second_half_;
  std::int64_t half_m_;
  std::array<std::int64_t, 2> forwards_{}, backwards_{};
  std::deque<WorkItem> deferred_;
  std::vector<WorkItem> items_;
};

} // namespace

std::vector<WorkItem> dualpipe_schedule(std::int64_t p, std::int64_t m, std::int64_t rank) {
  assert(p % 2 == 0 && m % 2 == 0 && m >= 2 * p);
  const std::int64_t half_p = p / 2;
  const std::int64_t h = std::min(rank, p - 1 - rank); // half_rank
  const bool middle = h == half_p - 1;
  DualPipeOrder o(p, m, rank);
  for (std::int64_t i = 0; i < 2 * (half_p - h - 1); ++i) o.forward(0); // step 1: nF0
  for (std::int64_t i = 0; i < h + 1; ++i) {                            // step 2: nF0F1
    o.forward(0);
    o.forward(1);
  }
  for (std::int64_t i = 0; i < half_p - h - 1; ++i) { // step 3: nB1W1F1, zero bubble
    o.backward(1, true);
    o.weight();
    o.forward(1);
  }
  for (std::int64_t i = 0; i < m / 2 - p + h + 1; ++i) { // step 4 (main): nF0B1F1B0
    if (i == 0 && middle)
      o.unmerged_pair(0, 1);
    else
      o.overlapped(0, 1);
    o.overlapped(1, 0);
  }
  for (std::int64_t i = 0; i < half_p - h - 1; ++i) { // step 5: nB1F1B0
    o.backward(1, false);
    o.overlapped(1, 0);
  }
  bool zero_bubble = false; // step 6: nB1B0, the second half with zero bubble
  for (std::int64_t i = 0; i < h + 1; ++i) {
    if (i == (h + 1) / 2 && h % 2 == 1) zero_bubble = true;
    o.backward(1, zero_bubble);
    if (i == (h + 1) / 2 && h % 2 == 0) zero_bubble = true;
    o.backward(0, zero_bubble);
  }
  for (std::int64_t i = 0; i < half_p - h - 1; ++i) { // step 7: nWB0, zero bubble
    o.weight();
    o.backward(0, true);
  }
  for (std::int64_t i = 0; i < h + 1; ++i) o.weight(); // step 8: nW
  return o.take();
}

} // namespace twocs::lowering::detail
