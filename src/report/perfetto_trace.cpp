#include <twocs/report/perfetto_trace.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include <twocs/fileio/chunked_writer.hpp>
#include <twocs/report/protobuf_encoder.hpp>

namespace twocs::report {
namespace {

using lowering::DeviceId;
using lowering::TaskId;
using proto::Message;

// Field numbers, each from the published schema (github.com/google/perfetto, protos/perfetto/trace/).
constexpr std::uint32_t trace_packet = 1;              // trace.proto: Trace.packet
constexpr std::uint32_t packet_clock_snapshot = 6;     // trace_packet.proto: TracePacket.clock_snapshot
constexpr std::uint32_t packet_timestamp = 8;          // trace_packet.proto: TracePacket.timestamp
constexpr std::uint32_t packet_defaults = 59;          // trace_packet.proto: TracePacket.trace_packet_defaults
constexpr std::uint32_t defaults_clock_id = 58;        // trace_packet_defaults.proto: timestamp_clock_id
constexpr std::uint32_t snapshot_clocks = 1;           // clock_snapshot.proto: ClockSnapshot.clocks
constexpr std::uint32_t clock_id = 1;                  // clock_snapshot.proto: ClockSnapshot.Clock.clock_id
constexpr std::uint32_t clock_timestamp = 2;           // clock_snapshot.proto: ClockSnapshot.Clock.timestamp
constexpr std::uint32_t clock_incremental = 3;         // clock_snapshot.proto: ClockSnapshot.Clock.is_incremental
constexpr std::uint64_t boottime_clock = 6;            // builtin_clock.proto: BUILTIN_CLOCK_BOOTTIME, the trace's clock
constexpr std::uint64_t delta_clock = 64;              // clock_snapshot.proto: [64, 127] are the sequence's own clocks
constexpr std::uint32_t packet_sequence_id = 10;       // trace_packet.proto: trusted_packet_sequence_id
constexpr std::uint32_t packet_track_event = 11;       // trace_packet.proto: TracePacket.track_event
constexpr std::uint32_t packet_interned_data = 12;     // trace_packet.proto: TracePacket.interned_data
constexpr std::uint32_t packet_sequence_flags = 13;    // trace_packet.proto: TracePacket.sequence_flags
constexpr std::uint32_t packet_track_descriptor = 60;  // trace_packet.proto: TracePacket.track_descriptor
constexpr std::uint64_t incremental_state_cleared = 1; // trace_packet.proto: SEQ_INCREMENTAL_STATE_CLEARED
constexpr std::uint64_t needs_incremental_state = 2;   // trace_packet.proto: SEQ_NEEDS_INCREMENTAL_STATE
constexpr std::uint32_t track_uuid = 1;                // track_descriptor.proto: TrackDescriptor.uuid
constexpr std::uint32_t track_name = 2;                // track_descriptor.proto: TrackDescriptor.name
constexpr std::uint32_t track_parent = 5;              // track_descriptor.proto: TrackDescriptor.parent_uuid
constexpr std::uint32_t track_counter = 8;             // track_descriptor.proto: TrackDescriptor.counter
constexpr std::uint32_t track_child_ordering = 11;     // track_descriptor.proto: TrackDescriptor.child_ordering
constexpr std::uint64_t ordering_explicit = 3;         // track_descriptor.proto: ChildTracksOrdering.EXPLICIT
constexpr std::uint32_t track_rank = 12;               // track_descriptor.proto: sibling_order_rank
constexpr std::uint32_t counter_unit = 3;              // counter_descriptor.proto: CounterDescriptor.unit
constexpr std::uint32_t counter_unit_name = 6;         // counter_descriptor.proto: CounterDescriptor.unit_name
constexpr std::uint64_t unit_count = 2;                // counter_descriptor.proto: UNIT_COUNT
constexpr std::uint64_t unit_size_bytes = 3;           // counter_descriptor.proto: UNIT_SIZE_BYTES
constexpr std::uint32_t event_annotations = 4;         // track_event.proto: TrackEvent.debug_annotations
constexpr std::uint32_t event_type = 9;                // track_event.proto: TrackEvent.type
constexpr std::uint32_t event_name_iid = 10;           // track_event.proto: TrackEvent.name_iid
constexpr std::uint32_t event_track_uuid = 11;         // track_event.proto: TrackEvent.track_uuid
constexpr std::uint32_t event_extra_counter_values = 12; // track_event.proto: TrackEvent.extra_counter_values
constexpr std::uint32_t event_extra_counter_tracks = 31; // track_event.proto: extra_counter_track_uuids
constexpr std::uint32_t event_counter_value = 30;        // track_event.proto: TrackEvent.counter_value
constexpr std::uint64_t type_slice_begin = 1;            // track_event.proto: TYPE_SLICE_BEGIN
constexpr std::uint64_t type_slice_end = 2;              // track_event.proto: TYPE_SLICE_END
constexpr std::uint64_t type_instant = 3;                // track_event.proto: TYPE_INSTANT
constexpr std::uint64_t type_counter = 4;                // track_event.proto: TYPE_COUNTER
constexpr std::uint32_t interned_names = 2;              // interned_data.proto: InternedData.event_names
constexpr std::uint32_t interned_annotation_names = 3;   // interned_data.proto: debug_annotation_names
constexpr std::uint32_t interned_iid = 1;                // EventName/EventCategory/DebugAnnotationName.iid
constexpr std::uint32_t interned_name = 2;               // EventName/EventCategory/DebugAnnotationName.name
constexpr std::uint32_t annotation_name_iid = 1;         // debug_annotation.proto: DebugAnnotation.name_iid
constexpr std::uint32_t annotation_int = 4;              // debug_annotation.proto: DebugAnnotation.int_value
constexpr std::uint32_t sequence_id = 1;                 // the one packet sequence of this writer

/// Trace timestamps are nanoseconds (TracePacket.timestamp); the simulation's resolution is finer.
std::int64_t nanoseconds(units::Seconds t) { return std::llround(t.value() * 1e9); }

/// One packet to write, in time order: a slice's end sorts before a begin at the same time so
/// that back-to-back slices of one track do not nest.
struct Event {
  std::int64_t time = 0;
  std::uint8_t kind = 0; // 0 end, 1 counter, 2 begin, 3 instant
  std::uint32_t track = 0;
  std::uint64_t item = 0; // task id, or counter index << 32 | sample index
  bool operator<(const Event& o) const {
    return std::tie(time, kind, track, item) < std::tie(o.time, o.kind, o.track, o.item);
  }
};

/// The annotations' names, interned once. Few, to keep the trace small: the Chrome JSON trace
/// carries every argument (docs/outputs.md).
enum class Annotation : std::uint64_t { micro_batch = 1, bytes };
constexpr const char* annotation_names[] = {"", "micro_batch", "bytes"};

/// A slice's name: the Chrome trace's display name without the micro-batch (an annotation), so
/// that names repeat across micro-batches and interning keeps one copy of each.
std::string slice_name(const lowering::TaskGraph& graph, TaskId id) {
  const lowering::Task& t = graph.task(id);
  std::string name = graph.label(t.label);
  if (t.layer >= 0) name += fmt::format(" L{}", t.layer);
  if (t.is_transfer()) name += fmt::format(" {}->{}", t.device, graph.transfer(id).peer);
  return name;
}

class PerfettoWriter {
public:
  PerfettoWriter(std::ostream& out, const lowering::TaskGraph& graph, const engine::Timeline& timeline,
                 const std::vector<CounterTrack>& counters, const TraceFilter& filter)
      : w_(out), graph_(graph), timeline_(timeline), counters_(counters), filter_(filter),
        track_of_task_(graph.size(), 0) {}

  void write() {
    // Timestamps are deltas from the previous packet's (ClockSnapshot.Clock.is_incremental) on
    // a clock of the sequence, zero at the trace clock's zero: 1-3 bytes each instead of 5.
    Message first, defaults, snapshot, boottime, deltas, clocks;
    defaults.varint(defaults_clock_id, delta_clock);
    first.varint(packet_sequence_id, sequence_id).varint(packet_sequence_flags, incremental_state_cleared);
    emit(first.message(packet_defaults, defaults));
    boottime.varint(clock_id, boottime_clock).varint(clock_timestamp, 0);
    deltas.varint(clock_id, delta_clock).varint(clock_timestamp, 0).varint(clock_incremental, 1);
    snapshot.message(snapshot_clocks, boottime).message(snapshot_clocks, deltas);
    clocks.varint(packet_sequence_id, sequence_id).varint(packet_sequence_flags, needs_incremental_state);
    emit(clocks.message(packet_clock_snapshot, snapshot));
    describe_tracks();
    write_events(collect_events());
    w_.flush();
  }

private:
  std::uint32_t add_track(Message descriptor) {
    const auto uuid = ++tracks_;
    descriptor.varint(track_uuid, uuid);
    Message packet;
    packet.message(packet_track_descriptor, descriptor);
    emit(packet);
    return uuid;
  }

  std::uint32_t device_track(DeviceId d) {
    auto [it, added] = device_tracks_.try_emplace(d, 0);
    if (added) {
      Message t;
      t.bytes(track_name, fmt::format("device {}", d)).varint(track_child_ordering, ordering_explicit);
      it->second = add_track(std::move(t.signed_varint(track_rank, d)));
    }
    return it->second;
  }

  /// An event's packet: its time as the delta from the previous one's, on the writer's sequence.
  Message timed_packet(std::int64_t time) {
    Message packet;
    packet.varint(packet_timestamp, static_cast<std::uint64_t>(time - last_time_));
    last_time_ = time;
    packet.varint(packet_sequence_id, sequence_id).varint(packet_sequence_flags, needs_incremental_state);
    return packet;
  }

  bool kept(TaskId id) const { return filter_.keeps(graph_.task(id).device) && filter_.keeps(timeline_.tasks[id]); }

  void describe_tracks();
  void describe_stream(DeviceId d, lowering::Stream stream, std::vector<TaskId>& tasks);
  void describe_counters();
  [[nodiscard]] std::vector<Event> collect_events() const;
  void write_events(const std::vector<Event>& events);
  void write_slice_event(const Event& e, std::span<const Event* const> counters);
  void add_counter_values(Message& event, std::span<const Event* const> counters) const;
  [[nodiscard]] double counter_value(const Event& e) const {
    return counters_[e.item >> 32].samples[e.item & 0xFFFFFFFFU].value;
  }
  void write_counter(const Event& e);
  std::uint64_t intern(std::unordered_map<std::string, std::uint64_t>& table, std::string name, Message& interned,
                       std::uint32_t field);

  void emit(const Message& packet) {
    std::string& buffer = scratch_;
    buffer.clear();
    buffer.push_back(static_cast<char>(trace_packet << 3 | 2)); // Trace.packet, length-delimited
    proto::append_varint(buffer, packet.data().size());
    w_.append(buffer);
    w_.append(packet.data());
    w_.end_record();
  }

  fileio::ChunkedWriter w_;
  const lowering::TaskGraph& graph_;
  const engine::Timeline& timeline_;
  const std::vector<CounterTrack>& counters_;
  const TraceFilter& filter_;
  std::vector<std::uint32_t> track_of_task_; // the lane track of each kept task
  std::vector<std::uint32_t> track_of_counter_;
  std::map<DeviceId, std::uint32_t> device_tracks_;
  std::uint32_t tracks_ = 0;
  std::unordered_map<std::string, std::uint64_t> names_;
  bool annotations_interned_ = false;
  std::int64_t last_time_ = 0; // of the last packet written, in ns
  std::string scratch_;
};

void PerfettoWriter::describe_tracks() {
  std::map<std::pair<DeviceId, int>, std::vector<TaskId>> streams; // by device, then stream
  for (TaskId id = 0; id < graph_.size(); ++id)
    if (kept(id)) streams[{graph_.task(id).device, static_cast<int>(graph_.stream(id))}].push_back(id);
  for (auto& [key, tasks] : streams) describe_stream(key.first, static_cast<lowering::Stream>(key.second), tasks);
  describe_counters();
}

/// The stream's tasks go to lanes, each a track of the stream's name: a task joins the first lane
/// free by its start, so no two slices of a track overlap (Perfetto nests or drops those).
void PerfettoWriter::describe_stream(DeviceId d, lowering::Stream stream, std::vector<TaskId>& tasks) {
  const auto span = [&](TaskId id) {
    return std::pair{nanoseconds(timeline_.tasks[id].start), nanoseconds(timeline_.tasks[id].finish)};
  };
  std::sort(tasks.begin(), tasks.end(), [&](TaskId a, TaskId b) {
    return std::pair{span(a), a} < std::pair{span(b), b};
  });
  const std::uint32_t parent = device_track(d);
  std::vector<std::pair<std::int64_t, std::uint32_t>> lanes; // (busy until, track)
  for (const TaskId id : tasks) {
    const auto [start, finish] = span(id);
    auto lane = std::find_if(lanes.begin(), lanes.end(), [start = start](const auto& l) { return l.first <= start; });
    if (lane == lanes.end()) {
      Message t;
      t.varint(track_parent, parent).bytes(track_name, lowering::to_string(stream));
      lanes.emplace_back(0, add_track(std::move(t.varint(track_rank, static_cast<std::uint64_t>(stream)))));
      lane = lanes.end() - 1;
    }
    lane->first = finish;
    track_of_task_[id] = lane->second;
  }
}

void PerfettoWriter::describe_counters() {
  std::uint32_t links = 0;
  constexpr std::int64_t counter_rank = 100; // after the streams (their ranks: Stream's values)
  for (std::size_t i = 0; i < counters_.size(); ++i) {
    const CounterTrack& c = counters_[i];
    Message unit;
    if (c.unit == CounterUnit::bytes) unit.varint(counter_unit, unit_size_bytes);
    if (c.unit == CounterUnit::count) unit.varint(counter_unit, unit_count);
    if (c.unit == CounterUnit::percent) unit.bytes(counter_unit_name, "%");
    Message t;
    if (c.device) {
      t.varint(track_parent, device_track(*c.device))
          .signed_varint(track_rank, counter_rank + static_cast<std::int64_t>(i));
    } else {
      if (links == 0) {
        Message group;
        group.bytes(track_name, "links").varint(track_child_ordering, ordering_explicit);
        links = add_track(std::move(group.signed_varint(track_rank, graph_.device_count())));
      }
      t.varint(track_parent, links).signed_varint(track_rank, static_cast<std::int64_t>(i));
    }
    t.bytes(track_name, c.name).message(track_counter, unit);
    track_of_counter_.push_back(add_track(std::move(t)));
  }
}

std::vector<Event> PerfettoWriter::collect_events() const {
  std::vector<Event> events;
  for (TaskId id = 0; id < graph_.size(); ++id) {
    if (!kept(id)) continue;
    const std::int64_t start = nanoseconds(timeline_.tasks[id].start), finish = nanoseconds(timeline_.tasks[id].finish);
    if (finish <= start) {
      events.push_back({start, 3, track_of_task_[id], id});
      continue;
    }
    events.push_back({start, 2, track_of_task_[id], id});
    events.push_back({finish, 0, track_of_task_[id], id});
  }
  for (std::size_t c = 0; c < counters_.size(); ++c)
    for (std::size_t s = 0; s < counters_[c].samples.size(); ++s)
      events.push_back(
          {nanoseconds(counters_[c].samples[s].time), 1, track_of_counter_[c], std::uint64_t{c} << 32 | s});
  std::sort(events.begin(), events.end());
  return events;
}

/// Counter samples at the time of a slice event ride on it (TrackEvent.extra_counter_values,
/// 8 at most per event: trace processor's limit) instead of a packet each: 6 bytes, not 18.
void PerfettoWriter::write_events(const std::vector<Event>& events) {
  constexpr std::size_t per_event = 8; // TrackEventData::kMaxNumExtraCounters in trace processor
  for (std::size_t i = 0; i < events.size();) {
    std::size_t end = i;
    while (end < events.size() && events[end].time == events[i].time) ++end;
    std::vector<const Event*> counters; // at this time, sorted after the ends and before the begins
    for (std::size_t k = i; k < end; ++k)
      if (events[k].kind == 1) counters.push_back(&events[k]);
    std::size_t carried = 0;
    for (std::size_t k = i; k < end; ++k) {
      if (events[k].kind == 1) continue;
      const std::size_t take = std::min(per_event, counters.size() - carried);
      write_slice_event(events[k], std::span(counters).subspan(carried, take));
      carried += take;
    }
    for (; carried < counters.size(); ++carried) write_counter(*counters[carried]);
    i = end;
  }
}

void PerfettoWriter::add_counter_values(Message& event, std::span<const Event* const> counters) const {
  // Repeated fields unpacked (proto2): all the tracks, then all the values, in the same order.
  for (const Event* c : counters) event.varint(event_extra_counter_tracks, c->track);
  for (const Event* c : counters) event.signed_varint(event_extra_counter_values, std::llround(counter_value(*c)));
}

std::uint64_t PerfettoWriter::intern(std::unordered_map<std::string, std::uint64_t>& table, std::string name,
                                     Message& interned, std::uint32_t field) {
  const auto [it, added] = table.try_emplace(std::move(name), table.size() + 1); // iid 0 means none
  if (added) {
    Message entry;
    interned.message(field, entry.varint(interned_iid, it->second).bytes(interned_name, it->first));
  }
  return it->second;
}

void PerfettoWriter::write_slice_event(const Event& e, std::span<const Event* const> counters) {
  if (e.kind == 0) { // an end needs only its track
    Message event;
    event.varint(event_type, type_slice_end).varint(event_track_uuid, e.track);
    add_counter_values(event, counters);
    emit(timed_packet(e.time).message(packet_track_event, event));
    return;
  }
  const auto id = static_cast<TaskId>(e.item);
  const lowering::Task& t = graph_.task(id);
  Message interned, event;
  if (!annotations_interned_) {
    for (std::uint64_t i = 1; i < std::size(annotation_names); ++i) {
      Message entry;
      interned.message(interned_annotation_names,
                       entry.varint(interned_iid, i).bytes(interned_name, annotation_names[i]));
    }
    annotations_interned_ = true;
  }
  const std::uint64_t name_iid = intern(names_, slice_name(graph_, id), interned, interned_names);
  event.varint(event_type, e.kind == 3 ? type_instant : type_slice_begin).varint(event_track_uuid, e.track);
  event.varint(event_name_iid, name_iid);
  const auto annotate = [&](Annotation name, std::int64_t value) {
    Message a;
    event.message(event_annotations,
                  a.varint(annotation_name_iid, static_cast<std::uint64_t>(name)).signed_varint(annotation_int, value));
  };
  if (t.micro_batch >= 0) annotate(Annotation::micro_batch, t.micro_batch);
  if (t.is_transfer()) annotate(Annotation::bytes, std::llround(graph_.transfer(id).bytes.value()));
  add_counter_values(event, counters);
  Message packet = timed_packet(e.time);
  if (!interned.empty()) packet.message(packet_interned_data, interned);
  emit(packet.message(packet_track_event, event));
}

void PerfettoWriter::write_counter(const Event& e) {
  const double value = counter_value(e);
  Message event;
  event.varint(event_type, type_counter).varint(event_track_uuid, e.track);
  event.signed_varint(event_counter_value, std::llround(value)); // whole: bytes, counts, percent
  emit(timed_packet(e.time).message(packet_track_event, event));
}

} // namespace

void write_perfetto_trace(std::ostream& out, const lowering::TaskGraph& graph, const engine::Timeline& timeline,
                          const std::vector<CounterTrack>& counters, const TraceFilter& filter) {
  if (timeline.tasks.size() != graph.size())
    throw std::logic_error("write_perfetto_trace: the timeline does not belong to the task graph");
  PerfettoWriter(out, graph, timeline, counters, filter).write();
}

} // namespace twocs::report
