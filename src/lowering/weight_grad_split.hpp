// Private: a backward cut into the two passes zero-bubble schedules run apart (Qi et al., "Zero
// Bubble Pipeline Parallelism", ICLR 2024, section 2): B, the input gradient (everything but the
// weight-gradient GEMMs), and W, the weight-gradient GEMMs, which only need B's output gradient
// and the layer's saved input. Norm and bias gradients stay in B, as the authors' WeightGradStore
// captures the linear layers' weight gradients only.
#pragma once

#include <map>

#include "prepared_steps.hpp"

namespace twocs::lowering::detail {

struct SplitBackward {
  PreparedSequence input_grad;  // B
  PreparedSequence weight_grad; // W
};

/// Cuts `backward`. A collective in B keeps overlapping the kernels it overlapped that stay in B.
[[nodiscard]] SplitBackward split_weight_grads(const PreparedSequence& backward);

/// The cut of every backward sequence of a prepared model, made once.
class WeightGradSplits {
public:
  WeightGradSplits() = default;
  explicit WeightGradSplits(const PreparedModel& ops);

  /// The cut of `backward`, one of the model's sequences.
  [[nodiscard]] const SplitBackward& of(const PreparedSequence& backward) const;

private:
  void add(const PreparedSequence& backward);
  std::map<const PreparedSequence*, SplitBackward> splits_;
};

} // namespace twocs::lowering::detail
