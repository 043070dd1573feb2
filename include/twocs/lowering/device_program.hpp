// Builds one device's part of the task DAG in program order, as a framework would issue it:
// compute kernels in order on the compute stream, collectives in order on their communication
// stream, and the waits between them. Collectives are matched across devices through a shared
// registry: members of a group issue that group's collectives in the same order.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <boost/container_hash/hash.hpp>

#include <twocs/lowering/collective.hpp>
#include <twocs/lowering/collective_policy.hpp>
#include <twocs/lowering/stream.hpp>
#include <twocs/lowering/task_sink.hpp>

namespace twocs::lowering {

class RankLayout;
namespace detail {
class PeerTraffic;
} // namespace detail

/// The collectives some members of a group have issued and others not yet.
/// A tag of a group's whole membership (a hash of its devices in order), so that two groups of
/// one kind that share their first device and size stay apart.
[[nodiscard]] DeviceId group_tag(const std::vector<DeviceId>& devices);

class CollectiveRegistry {
public:
  /// `simulated[d]` tells whether device d runs a program; empty means every device does. A
  /// group must have all its members simulated or exactly one (the others folded away).
  /// `policy` chooses each collective's algorithm and shape when it is first lowered.
  /// `layout`: where the ranks sit, needed by CollectivePolicy::folded_peer_traffic to find the
  /// folded peers' groups (without it, or unfolded, there is no peer traffic).
  explicit CollectiveRegistry(TaskSink& graph, std::vector<bool> simulated = {}, CollectivePolicy policy = {},
                              const RankLayout* layout = nullptr);
  ~CollectiveRegistry();
  CollectiveRegistry(const CollectiveRegistry&) = delete;
  CollectiveRegistry& operator=(const CollectiveRegistry&) = delete;

  /// Joins `device` to the `sequence`-th collective of its group (identified by `group_kind`, the
  /// group's first device and group_tag), lowering it when `device` is the first member to get there.
  [[nodiscard]] std::vector<TaskId> join(const CollectiveSpec& spec, const std::vector<DeviceId>& devices,
                                         std::uint32_t sequence, DeviceId device, std::span<const TaskId> entry);

  /// Matched point-to-point transfer: the message tagged `tag` from `from` to `to`.
  [[nodiscard]] std::vector<TaskId> join_transfer(const CollectiveSpec& spec, DeviceId from, DeviceId to,
                                                  std::uint32_t tag, DeviceId device, std::span<const TaskId> entry);

  /// Collectives some members never joined (a lowering bug if non-zero at the end).
  [[nodiscard]] std::size_t pending() const { return pending_.size(); }

private:
  using Key = std::tuple<int, DeviceId, DeviceId, std::uint32_t>;
  std::vector<TaskId> join_key(const Key& key, const CollectiveSpec& spec, const std::vector<DeviceId>& devices,
                               DeviceId device, std::span<const TaskId> entry);

  [[nodiscard]] std::optional<DeviceId> only_simulated_member(const std::vector<DeviceId>& devices) const;

  /// A collective being joined, with its folded peers' copies (peer_traffic.hpp) when it has any.
  struct Pending {
    std::unique_ptr<CollectiveInstance> instance;
    std::vector<std::unique_ptr<CollectiveInstance>> peers; // member i of each stands for member i
    std::optional<DeviceId> only_member;                    // with peers: the one simulated member, for the whole group
  };
  Pending lower(const CollectiveSpec& spec, const std::vector<DeviceId>& devices);
  std::vector<TaskId> join_with_peers(Pending& pending, const CollectiveSpec& spec, DeviceId device,
                                      std::span<const TaskId> entry);

  TaskSink& graph_;
  std::vector<bool> simulated_;
  CollectivePolicy policy_;
  std::unique_ptr<detail::PeerTraffic> peer_traffic_;
  // Looked up, never iterated: its order does not reach the graph.
  std::unordered_map<Key, Pending, boost::hash<Key>> pending_;
  std::int32_t next_instance_ = 0;
};

/// When the compute stream needs a collective's result.
struct CollectiveWait {
  /// Compute kernels that may run before the result is needed; the next one waits.
  int overlapped_ops = 0;
  /// Nothing waits until wait_for_stream() is called for its stream (gradient buckets).
  bool deferred = false;
};

/// The host is a CPU thread that launches the device's work in program order, each launch taking
/// `launch_time` of host time (a PyTorch operator's dispatch and the CUDA launch: one per
/// operation, also where the operation loops over kernels in C++), so that work
/// starts no earlier than its launch. The host runs ahead of the device while kernels last longer
/// than their launches and falls behind when they are shorter; where it waits for the device (a
/// host synchronisation) it loses its lead, and the device then waits for the launches after it
/// (docs/simulation.md, "Host launches"). A launch time of 0 leaves the host out: work starts as
/// soon as the streams and its inputs allow.
class DeviceProgram {
public:
  DeviceProgram(TaskSink& graph, CollectiveRegistry& registry, DeviceId device,
                units::Seconds launch_time = units::Seconds(0));

  /// Appends a kernel to the compute stream, launched in `host_launches` launch times (an op
  /// whose code issues several kernels, model::ComputeOp::host_launches); returns its task.
  TaskId compute(const TaskTag& tag, const Kernel& kernel, double host_launches = 1);

  /// Issues the device's part of a collective over `devices` (which include this device) on
  /// the group's communication stream, after the latest compute kernel and `also_after`.
  void collective(const CollectiveSpec& spec, const std::vector<DeviceId>& devices, CollectiveWait wait,
                  std::span<const TaskId> also_after = {});

  /// Point-to-point messages between pipeline stages, matched by `tag` (which tensor of which
  /// micro-batch). A send leaves after the latest compute kernel; a receive is posted at this
  /// point of the program. Messages posted together run concurrently (batched isend/irecv, as
  /// Megatron-LM does), and the next compute kernel waits for all of them; with `sender_waits`
  /// false it does not wait for the sends (an asynchronous isend whose buffer stays alive).
  /// Returns the transfer.
  std::vector<TaskId> send(const CollectiveSpec& spec, DeviceId to, std::uint32_t tag, bool sender_waits = true);
  /// Returns the transfer, so that work on the received data can wait for it; with `next_waits`
  /// false the next compute kernel does not wait for it (a message posted ahead of its use).
  std::vector<TaskId> receive(const CollectiveSpec& spec, DeviceId from, std::uint32_t tag, bool next_waits = true);
  /// The next compute kernel waits for `tasks`, issued on `stream` (a request's wait()).
  void wait_for(std::vector<TaskId> tasks, Stream stream);

  /// The next compute kernel waits for every collective issued so far on `stream`.
  void wait_for_stream(Stream stream);
  /// A host synchronisation (torch.cuda.synchronize, a tensor's .item()): the host waits for
  /// every stream of the device, so the next compute kernel waits for every task issued so far,
  /// deferred gradient buckets and point-to-point messages included.
  void synchronize_host();
  /// The host waits for `task` to finish (it reads a result back: the token counts an expert
  /// dispatch needs on the CPU) before it launches anything more.
  void host_waits_for(TaskId task);

  /// The work issued from here to end_graph() is one CUDA graph (training.host.cuda_graphs): the
  /// host launches it once, with its first work, and its later work waits for that launch only.
  void begin_graph();
  void end_graph();
  /// Inside a graph, the work issued between pause_graph() and resume_graph() is launched on its
  /// own, after the graph: hooks the framework runs between per-layer graphs (the data-parallel
  /// gradient buckets of the parameters a layer's backward graph finalised).
  void pause_graph();
  void resume_graph();

  [[nodiscard]] DeviceId device() const { return device_; }

private:
  struct PendingWait {
    std::vector<TaskId> tasks;
    Stream stream;
    int remaining;
    bool deferred;
  };
  std::vector<TaskId> entry_for(Stream stream) const;
  std::vector<TaskId> point_to_point_entry(const CollectiveSpec& spec);
  void add_wait(std::vector<TaskId> tasks, Stream stream, CollectiveWait wait);
  /// The host's launch of the work tagged `tag`, `launches` launch times long; none without a
  /// launch time.
  std::optional<TaskId> launch(const TaskTag& tag, double launches = 1);

  TaskSink& graph_;
  CollectiveRegistry& registry_;
  DeviceId device_;
  units::Seconds launch_time_;
  std::optional<TaskId> last_compute_;
  std::optional<TaskId> last_launch_;
  enum class GraphState : std::uint8_t { outside, inside, paused } graph_state_ = GraphState::outside;
  std::optional<TaskId> graph_launch_; // the launch of the graph being issued
  std::vector<TaskId> host_waits_;     // what the next launch waits for
  std::array<std::vector<TaskId>, stream_count> stream_tail_;
  std::vector<PendingWait> waits_;
  std::map<std::tuple<int, DeviceId, DeviceId>, std::uint32_t> group_sequence_; // (kind, first, group_tag) -> next
};

} // namespace twocs::lowering
