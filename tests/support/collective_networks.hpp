// A DGX H100-like network for the lowering's collective choices: 8 devices a node on a 370 GB/s
// NVSwitch fabric (2 us a message), a 48 GB/s NIC each (5 us), in-network reduction as given.
#pragma once

#include <twocs/lowering/collective_policy.hpp>

namespace twocs::testing {

inline lowering::CollectiveNetwork dgx_like(double in_network_efficiency = 0) {
  lowering::CollectiveNetwork n;
  n.devices_per_node = 8;
  n.intra_bandwidth = units::ByteRate(370e9);
  n.intra_pair_bandwidth = units::ByteRate(370e9);
  n.intra_latency = units::Seconds(2e-6);
  n.inter_bandwidth = units::ByteRate(48e9);
  n.inter_latency = units::Seconds(5e-6);
  n.in_network_efficiency = in_network_efficiency;
  return n;
}

} // namespace twocs::testing
