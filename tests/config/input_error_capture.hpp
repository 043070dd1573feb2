// Test helpers for the input side: run a loader call that must fail and inspect the
// InputError it throws ("file:line:column", problem, fix).
#pragma once

#include <functional>
#include <stdexcept>
#include <string>

#include <twocs/config/scenario_loader.hpp>
#include <twocs/error.hpp>

namespace twocs::test {

/// The InputError thrown by `call`; a std::logic_error (failing the test) when none is.
inline InputError input_error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const InputError& error) {
    return error;
  }
  throw std::logic_error("expected an InputError, but the call succeeded");
}

/// "file:line:column", or "" without a location.
inline std::string where(const InputError& error) {
  if (!error.location()) return "";
  const SourceLocation& at = *error.location();
  return at.file + ":" + std::to_string(at.line) + ":" + std::to_string(at.column);
}

inline InputError workload_error(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  return input_error_of([&] { (void)config::parse_workload({"w.yaml", yaml}, overrides); });
}

inline InputError platform_error(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  return input_error_of([&] { (void)config::parse_platform({"p.yaml", yaml}, overrides); });
}

/// A small valid workload; each line is numbered in the comment so tests can name locations.
inline const std::string small_workload = R"(model:
  layers: 4
  hidden: 512
  heads: 8
  vocab: 1000
  seq_len: 128
training:
  global_batch: 8
  micro_batch: 1
  parallelism:
    tensor: 2
    pipeline: 2
    data: 2
)";

/// A small valid platform of 2 nodes x 4 devices.
inline const std::string small_platform = R"(name: tiny
device:
  name: T1
  peak_flops: {bf16: 100TFLOP/s, fp32: 10TFLOP/s}
  memory: 16GiB
  memory_bandwidth: 1TB/s
node:
  devices: 4
  interconnect: {bandwidth: 100GB/s, latency: 1us}
cluster:
  nodes: 2
  network: {bandwidth: 10GB/s, latency: 5us}
)";

} // namespace twocs::test
