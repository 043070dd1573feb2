#include <twocs/report/chrome_trace.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <twocs/fileio/chunked_writer.hpp>
#include <twocs/fileio/text_escape.hpp>

namespace twocs::report {
namespace {

using fileio::ChunkedWriter;
using lowering::TaskId;

/// Separates the records of the traceEvents array: one per line, commas between them.
class EventList {
public:
  explicit EventList(ChunkedWriter& w) : w_(w) {}
  ChunkedWriter& next() {
    if (!first_) w_.append(",\n");
    first_ = false;
    w_.end_record();
    return w_;
  }

private:
  ChunkedWriter& w_;
  bool first_ = true;
};

/// Trace timestamps are microseconds; three decimals keep nanosecond resolution.
void append_microseconds(ChunkedWriter& w, units::Seconds t) {
  const double us = t.value() * 1e6;
  if (std::isfinite(us)) {
    w.format("{:.3f}", us);
  } else {
    w.append("null");
  }
}

void write_metadata(EventList& events, lowering::DeviceId devices, bool host, const TraceFilter& filter) {
  for (lowering::DeviceId d = 0; d < devices; ++d) {
    if (!filter.keeps(d)) continue;
    events.next().format(R"({{"name":"process_name","ph":"M","pid":{0},"tid":0,"args":{{"name":"device {0}"}}}})", d);
    events.next().format(R"({{"name":"process_sort_index","ph":"M","pid":{0},"tid":0,"args":{{"sort_index":{0}}}}})",
                         d);
    for (const auto stream : lowering::all_streams) {
      if (stream == lowering::Stream::host && !host) continue; // no host launches modelled
      const auto tid = static_cast<int>(stream);
      auto& w = events.next();
      w.format(R"({{"name":"thread_name","ph":"M","pid":{},"tid":{},"args":{{"name":)", d, tid);
      fileio::append_json_string(w.buffer(), lowering::to_string(stream));
      w.append("}}");
      events.next().format(R"({{"name":"thread_sort_index","ph":"M","pid":{},"tid":{},"args":{{"sort_index":{}}}}})", d,
                           tid, tid);
    }
  }
}

void write_args(ChunkedWriter& w, const lowering::TaskGraph& graph, TaskId id) {
  const lowering::Task& t = graph.task(id);
  w.append("\"args\":{\"label\":");
  fileio::append_json_string(w.buffer(), graph.label(t.label));
  w.format(",\"layer\":{},\"micro_batch\":{},\"pass\":\"{}\",\"flops\":", t.layer, t.micro_batch,
           model::to_string(t.pass));
  // A transfer does no arithmetic; its bytes are its payload, a kernel's its HBM traffic.
  fileio::append_json_number(w.buffer(), t.is_transfer() ? 0.0 : graph.kernel(id).flops.value());
  w.append(",\"bytes\":");
  if (!t.is_transfer()) {
    fileio::append_json_number(w.buffer(), graph.kernel(id).bytes.value());
  } else {
    const lowering::Transfer& x = graph.transfer(id);
    fileio::append_json_number(w.buffer(), x.bytes.value());
    w.format(",\"peer\":{},\"collective\":{},\"step\":{},\"algorithm\":\"{}\"", x.peer, x.collective, x.step,
             lowering::to_string(x.algorithm));
  }
  w.append("}");
}

void write_event(ChunkedWriter& w, const lowering::TaskGraph& graph, TaskId id, const engine::TaskTiming& timing) {
  const lowering::Task& t = graph.task(id);
  w.append("{\"name\":");
  fileio::append_json_string(w.buffer(), graph.display_name(id));
  if (t.is_transfer()) {
    w.format(",\"cat\":\"comm.{}\"", model::to_string(graph.transfer(id).group));
  } else if (t.is_host()) {
    w.append(",\"cat\":\"host\"");
  } else {
    w.append(",\"cat\":\"compute\"");
  }
  w.format(",\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":", t.device, static_cast<int>(graph.stream(id)));
  append_microseconds(w, timing.start);
  w.append(",\"dur\":");
  append_microseconds(w, timing.finish - timing.start);
  w.append(",");
  write_args(w, graph, id);
  w.append("}");
}

} // namespace

bool TraceFilter::keeps(lowering::DeviceId device) const {
  return !devices || std::binary_search(devices->begin(), devices->end(), device);
}

// A task that overlaps the window, even partly, is kept whole; an instant task at either edge too.
bool TraceFilter::keeps(const engine::TaskTiming& timing) const {
  return timing.finish.value() >= from.value() && (!until || timing.start.value() <= until->value());
}

void write_chrome_trace(std::ostream& out, const lowering::TaskGraph& graph, const engine::Timeline& timeline,
                        const TraceFilter& filter) {
  if (timeline.tasks.size() != graph.size())
    throw std::logic_error("write_chrome_trace: the timeline does not belong to the task graph");
  ChunkedWriter w(out);
  w.append("{\"traceEvents\":[\n");
  EventList events(w);
  write_metadata(events, graph.device_count(), graph.has_host_tasks(), filter);
  const auto count = static_cast<TaskId>(graph.size());
  for (TaskId id = 0; id < count; ++id)
    if (filter.keeps(graph.task(id).device) && filter.keeps(timeline.tasks[id]))
      write_event(events.next(), graph, id, timeline.tasks[id]);
  w.append("\n],\n\"displayTimeUnit\":\"ms\"}\n");
  w.flush();
}

} // namespace twocs::report
