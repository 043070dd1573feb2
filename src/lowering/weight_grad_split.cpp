#include "weight_grad_split.hpp"

#include <cassert>
#include <variant>

namespace twocs::lowering::detail {
namespace {

bool is_compute(const PreparedStep& p) { return std::holds_alternative<model::ComputeOp>(p.step); }

/// Of the `overlapped` kernels after position `at`, those that stay in B.
int kept_overlap(const PreparedSequence& steps, std::size_t at, int overlapped) {
  int kept = 0;
  for (std::size_t k = at + 1; k < steps.size() && overlapped > 0; ++k) {
    if (!is_compute(steps[k])) continue;
    --overlapped;
    if (!is_weight_grad(steps[k])) ++kept;
  }
  return kept;
}

} // namespace

SplitBackward split_weight_grads(const PreparedSequence& backward) {
  SplitBackward split;
  for (std::size_t i = 0; i < backward.size(); ++i) {
    const PreparedStep& p = backward[i];
    if (is_weight_grad(p)) {
      split.weight_grad.push_back(p);
      continue;
    }
    split.input_grad.push_back(p);
    if (auto* c = std::get_if<model::CollectiveOp>(&split.input_grad.back().step))
      c->overlapped_ops = kept_overlap(backward, i, c->overlapped_ops);
  }
  return split;
}

WeightGradSplits::WeightGradSplits(const PreparedModel& ops) {
  for (const auto& kind : ops.kinds) add(kind.backward);
  for (const auto* s : {&ops.head_backward_tied, &ops.head_backward_own, &ops.mtp_input_backward_shared,
                        &ops.mtp_input_backward_own, &ops.mtp_head_backward, &ops.embedding_backward})
    add(*s);
}

void WeightGradSplits::add(const PreparedSequence& backward) {
  splits_.emplace(&backward, split_weight_grads(backward));
}

const SplitBackward& WeightGradSplits::of(const PreparedSequence& backward) const {
  const auto it = splits_.find(&backward);
  assert(it != splits_.end() && "a backward sequence the model did not prepare");
  return it->second;
}

} // namespace twocs::lowering::detail
