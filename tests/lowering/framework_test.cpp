// What the framework model adds to the lowering: the optimizer's model-parallel all-reduces, fp32
// gradient reduction, the sequence-parallel LayerNorm-gradient all-reduce, host synchronisation,
// host time, and Megatron-DeepSpeed's gradient reduction after the last micro-batch.
#include <doctest/doctest.h>

#include <twocs/cost/roofline.hpp>
#include <twocs/error.hpp>
#include <twocs/lowering/device_program.hpp>
#include <twocs/lowering/lower_iteration.hpp>
#include <twocs/model/validate.hpp>

#include "support/scenarios.hpp"

using namespace twocs;
using namespace twocs::lowering;

namespace {

struct LabelTotal {
  std::size_t tasks = 0;
  double bytes = 0;
  double seconds = 0;
};

LabelTotal total(const TaskGraph& g, std::string_view label) {
  LabelTotal t;
  for (TaskId id = 0; id < g.size(); ++id) {
    if (g.label_of(id) != label) continue;
    ++t.tasks;
    if (g.task(id).is_transfer())
      t.bytes += g.transfer(id).bytes.value();
    else
      t.seconds += g.kernel(id).duration.value();
  }
  return t;
}

TaskGraph lower(const model::TrainingPlan& plan, std::int64_t layers = 4) {
  const cost::RooflineCostModel cost(testing::a100());
  return lower_iteration(testing::gpt(layers, 256, 8, 128, 1024), plan, cost);
}

} // namespace

TEST_CASE("fp16 all-reduces the overflow flag and the gradient norm over the model-parallel group, bf16 the norm") {
  auto plan = testing::plan_of(2, 2, 1, 4);
  plan.dtype = model::Dtype::fp16;
  // A 4-byte ring all-reduce over 2 devices: 2 steps x 2 senders of 2 bytes; over the tensor
  // group (p d = 2 groups) and then the pipeline group (t d = 2 groups): 16 transfers, 32 bytes.
  for (const char* label : {"optimizer.found_inf.all_reduce", "optimizer.grad_norm.all_reduce"}) {
    const auto t = total(lower(plan), label);
    CHECK(t.tasks == 16);
    CHECK(t.bytes == doctest::Approx(32));
  }
  plan.dtype = model::Dtype::bf16;
  CHECK(total(lower(plan), "optimizer.found_inf.all_reduce").tasks == 0);
  CHECK(total(lower(plan), "optimizer.grad_norm.all_reduce").tasks == 16);
}

TEST_CASE("bf16 reduces data-parallel gradients in fp32 unless told to use the model's dtype") {
  auto plan = testing::plan_of(1, 1, 2, 2);
  plan.overlap.dp_grad_reduce = false;
  plan.dtype = model::Dtype::bf16;
  const double fp32 = total(lower(plan), "grad.all_reduce").bytes;
  plan.grad_reduce = model::TrainingPlan::GradReduce::model_dtype;
  CHECK(fp32 == doctest::Approx(2 * total(lower(plan), "grad.all_reduce").bytes));
  plan.dtype = model::Dtype::fp16;
  plan.grad_reduce = model::TrainingPlan::GradReduce::automatic;
  CHECK(fp32 == doctest::Approx(2 * total(lower(plan), "grad.all_reduce").bytes));
}

TEST_CASE("sequence parallelism all-reduces LayerNorm and row-parallel bias gradients once per iteration") {
  auto plan = testing::plan_of(2, 1, 1, 3);
  plan.parallelism.sequence = true;
  // 4 layers x 6 h + the final LayerNorm's 2 h, fp32 (bf16 main grads); ring over 2: 2 steps x 2 senders x size / 2.
  const double size = (4 * 6 * 256 + 2 * 256) * 4.0;
  const auto t = total(lower(plan), "sp.layernorm_grads.all_reduce");
  CHECK(t.tasks == 4);
  CHECK(t.bytes == doctest::Approx(2 * 2 * size / 2));
  plan.parallelism.sequence = false;
  CHECK(total(lower(plan), "sp.layernorm_grads.all_reduce").tasks == 0);
}

TEST_CASE("a host synchronisation makes the next kernel wait for deferred collectives") {
  TaskGraph graph(2);
  CollectiveRegistry registry(graph);
  DeviceProgram a(graph, registry, 0), b(graph, registry, 1);
  CollectiveSpec spec;
  spec.group = model::CommGroup::data;
  spec.size = units::Bytes(1e6);
  for (DeviceProgram* p : {&a, &b}) {
    (void)p->compute({}, {units::Seconds(1e-3), units::Flops(0), units::Bytes(0), false});
    p->collective(spec, {0, 1}, CollectiveWait{0, true});
  }
  a.synchronize_host();
  const TaskId after_sync = a.compute({}, {units::Seconds(1e-3), units::Flops(0), units::Bytes(0), false});
  const TaskId no_sync = b.compute({}, {units::Seconds(1e-3), units::Flops(0), units::Bytes(0), false});
  const auto waits_on_transfer = [&](TaskId id) {
    bool found = false;
    graph.for_each_predecessor(id, [&](TaskId p) { found = found || graph.task(p).is_transfer(); });
    return found;
  };
  CHECK(waits_on_transfer(after_sync));
  CHECK_FALSE(waits_on_transfer(no_sync));
}

TEST_CASE("host time: one kernel per micro-batch and device, one per iteration and device") {
  auto plan = testing::plan_of(1, 2, 1, 4);
  plan.host.micro_batch_overhead = units::Seconds(50e-6);
  plan.host.iteration_overhead = units::Seconds(10e-3);
  const auto g = lower(plan);
  CHECK(total(g, "host.micro_batch").tasks == 8);
  CHECK(total(g, "host.micro_batch").seconds == doctest::Approx(8 * 50e-6));
  CHECK(total(g, "host.iteration").tasks == 2);
  CHECK(total(g, "host.iteration").seconds == doctest::Approx(2 * 10e-3));
  plan.host = {};
  CHECK(total(lower(plan), "host.micro_batch").tasks == 0);
}

TEST_CASE("Megatron-DeepSpeed reduces gradients in one collective after the last micro-batch, no interleaving") {
  auto plan = testing::plan_of(1, 1, 2, 2);
  plan.overlap.bucket_size = units::Bytes(1e5); // many buckets when overlapped
  const auto buckets = total(lower(plan), "grad.all_reduce").tasks;
  CHECK(buckets > 4);
  plan.framework = model::Framework::megatron_deepspeed;
  CHECK(total(lower(plan), "grad.all_reduce").tasks == 4); // one ring all-reduce over 2: 2 steps x 2 senders
  auto interleaved = testing::plan_of(1, 2, 1, 4);
  interleaved.parallelism.virtual_stages = 2;
  interleaved.pipeline_schedule = model::PipelineSchedule::interleaved_one_f_one_b;
  interleaved.framework = model::Framework::megatron_deepspeed;
  CHECK_THROWS_AS(model::validate(testing::gpt(4, 256, 8, 128, 1024), interleaved), InputError);
}

TEST_CASE("gradient accumulation: one pass per chunk and micro-batch, priced as its bytes at memory bandwidth") {
  // 2 stages of 2 layers, 3 micro-batches, 1 replica: DeepSpeed's BF16 optimizer pays every
  // micro-batch (18 bytes per parameter), fp16 autograd from the second (6 bytes), Megatron-LM's
  // fused accumulation never.
  auto plan = testing::plan_of(1, 2, 1, 3);
  plan.framework = model::Framework::megatron_deepspeed;
  plan.dtype = model::Dtype::bf16;
  const auto deepspeed = total(lower(plan), "grad.accumulate");
  CHECK(deepspeed.tasks == 2 * 3);
  plan.framework = model::Framework::megatron_lm;
  CHECK(total(lower(plan), "grad.accumulate").tasks == 0);
  plan.grad_accumulation_fusion = false;
  plan.dtype = model::Dtype::fp16;
  const auto autograd = total(lower(plan), "grad.accumulate");
  CHECK(autograd.tasks == 2 * 2);
  // Same parameters, bytes 18 x 3 against 6 x 2 (memory-bound: time follows bytes, less the
  // fixed launch cost of each kernel).
  const double launch = testing::a100().roofline.kernel_overhead.value();
  CHECK((deepspeed.seconds - 6 * launch) / (autograd.seconds - 4 * launch) == doctest::Approx(18.0 * 3 / (6.0 * 2)));
}

TEST_CASE("DeepSpeed's BF16 optimizer all-reduces gradients under ZeRO-1, Megatron-LM reduce-scatters them") {
  auto plan = testing::plan_of(1, 1, 2, 2);
  plan.dtype = model::Dtype::bf16;
  plan.optimizer.sharding = model::OptimizerSharding::optimizer;
  CHECK(total(lower(plan), "grad.reduce_scatter").tasks > 0);
  CHECK(total(lower(plan), "grad.all_reduce").tasks == 0);
  plan.framework = model::Framework::megatron_deepspeed;
  const auto all_reduce = total(lower(plan), "grad.all_reduce");
  CHECK(all_reduce.tasks > 0);
  CHECK(total(lower(plan), "grad.reduce_scatter").tasks == 0);
  plan.dtype = model::Dtype::fp16; // DeepSpeed's ZeRO-1 optimizer for fp16 reduce-scatters
  CHECK(total(lower(plan), "grad.reduce_scatter").tasks > 0);
}
