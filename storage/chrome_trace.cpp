#include "storage/chrome_trace.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "storage/atomic_file.h"

namespace ranklab {

namespace {

// A JSON string literal.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// Microseconds, as the format wants them, keeping the nanoseconds.
std::string micros(int64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", double(ns) / 1e3);
  return text;
}

// The rank's process id in the trace: 1-based, since some viewers treat pid 0 as special.
int pidOf(int rank) {
  return rank + 1;
}

// Where, on its own clock, a rank left the step's barrier: the moment all ranks share.
int64_t barrierExitNs(const StepRow& s) {
  return s.time_ns - s.update_ns - s.comm_ns;
}

// Per-rank shifts (ns) that line the ranks' clocks up at the first step every rank with
// steps reported, as the timeline does; none negative, so no time falls before 0.
std::map<int, int64_t> rankShifts(const std::vector<StepRow>& steps) {
  std::map<int, std::map<int64_t, const StepRow*>> by_rank;
  for (const StepRow& s : steps) by_rank[s.rank][s.step] = &s;
  std::map<int, int64_t> shift;
  for (const auto& [rank, rows] : by_rank) shift[rank] = 0;
  if (by_rank.size() < 2) return shift;
  for (const auto& [step, reference] : by_rank.begin()->second) {
    const bool everyone = std::all_of(by_rank.begin(), by_rank.end(),
                                      [s = step](const auto& r) { return r.second.count(s); });
    if (!everyone) continue;
    for (const auto& [rank, rows] : by_rank)
      shift[rank] = barrierExitNs(*reference) - barrierExitNs(*rows.at(step));
    break;
  }
  int64_t lowest = 0;
  for (const auto& [rank, ns] : shift) lowest = std::min(lowest, ns);
  for (auto& [rank, ns] : shift) ns -= lowest;
  return shift;
}

// Writes events one per line, separated by commas; counts them.
class TraceWriter {
 public:
  explicit TraceWriter(std::ostream& out) : out_(out) {}

  void event(const std::string& json) {
    out_ << (count_ == 0 ? "\n" : ",\n") << json;
    ++count_;
  }
  void metadata(int pid, int tid, const std::string& name, const std::string& args) {
    event("{\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
          (tid > 0 ? ",\"tid\":" + std::to_string(tid) : "") + ",\"name\":" + quoted(name) +
          ",\"args\":" + args + "}");
  }
  void complete(int pid, int tid, const std::string& name, const std::string& category,
                int64_t start_ns, int64_t dur_ns, const std::string& args) {
    event("{\"ph\":\"X\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) +
          ",\"name\":" + quoted(name) + ",\"cat\":" + quoted(category) +
          ",\"ts\":" + micros(start_ns) + ",\"dur\":" + micros(dur_ns) + ",\"args\":" + args + "}");
  }
  int64_t count() const { return count_; }

 private:
  std::ostream& out_;
  int64_t count_ = 0;
};

void nameProcesses(TraceWriter& trace, const std::vector<RankRow>& ranks,
                   const std::set<int>& seen) {
  std::map<int, std::string> hosts;
  for (const RankRow& r : ranks) hosts[r.rank] = r.host;
  for (int rank : seen) {
    const int pid = pidOf(rank);
    const std::string host = hosts.count(rank) ? " (" + hosts[rank] + ")" : "";
    trace.metadata(pid, 0, "process_name",
                   "{\"name\":" + quoted("rank " + std::to_string(rank) + host) + "}");
    trace.metadata(pid, 0, "process_sort_index", "{\"sort_index\":" + std::to_string(rank) + "}");
    trace.metadata(pid, kComputeThread, "thread_name", "{\"name\":\"compute\"}");
    trace.metadata(pid, kCommThread, "thread_name", "{\"name\":\"communication\"}");
    trace.metadata(pid, kSpanThread, "thread_name", "{\"name\":\"spans\"}");
    trace.metadata(pid, kPieceThread, "thread_name", "{\"name\":\"ring hops, buckets\"}");
    trace.metadata(pid, kDeviceThread, "thread_name", "{\"name\":\"device\"}");
  }
}

// A step's phases back to back, ending at its end: compute phases on the compute thread,
// waiting and moving bytes on the communication thread; its loss as a counter.
void writeStep(TraceWriter& trace, const StepRow& s, int64_t shift) {
  const PhaseTimes phases = s.phases();
  int64_t t = s.time_ns + shift - phaseTotal(phases);
  const std::string args = "{\"step\":" + std::to_string(s.step) +
                           ",\"epoch\":" + std::to_string(s.epoch) +
                           ",\"samples\":" + std::to_string(s.samples) + "}";
  for (int p = 0; p < kStepPhaseCount; ++p) {
    const int64_t length = phases[size_t(p)];
    if (length <= 0) continue;
    const bool compute = kStepPhaseKinds[size_t(p)] == PhaseKind::kCompute;
    const std::string name = kStepPhaseNames[size_t(p)];
    std::string phase_args = args;
    if (name == "comm") {
      phase_args.pop_back();
      phase_args += ",\"bytes_tx\":" + std::to_string(s.bytes_tx) +
                    ",\"bytes_rx\":" + std::to_string(s.bytes_rx) +
                    ",\"hidden_ns\":" + std::to_string(s.comm_hidden_ns) + "}";
    }
    trace.complete(pidOf(s.rank), compute ? kComputeThread : kCommThread, name,
                   compute ? "compute" : "communication", t, length, phase_args);
    t += length;
  }
  char loss[40];
  std::snprintf(loss, sizeof loss, "%.9g", s.loss);
  if (s.loss == s.loss)  // NaN has no JSON number
    trace.event("{\"ph\":\"C\",\"pid\":" + std::to_string(pidOf(s.rank)) +
                ",\"name\":\"loss\",\"ts\":" + micros(s.time_ns + shift) +
                ",\"args\":{\"loss\":" + loss + "}}");
}

// An event at its own time, else at the end of its rank's step; a launcher's is global.
void writeEvent(TraceWriter& trace, const EventRow& e, const std::map<int, int64_t>& shift,
                const std::map<std::pair<int, int64_t>, int64_t>& step_end) {
  int64_t ns = e.time_ns;
  if (ns <= 0) {
    const auto end = step_end.find({e.rank, e.step});
    if (end == step_end.end()) return;  // no time to put it at
    ns = end->second;
  } else if (shift.count(e.rank)) {
    ns += shift.at(e.rank);
  }
  const std::string args =
      "{\"step\":" + std::to_string(e.step) + ",\"text\":" + quoted(e.text) + "}";
  if (e.rank < 0) {
    trace.event("{\"ph\":\"i\",\"s\":\"g\",\"pid\":0,\"tid\":0,\"name\":" + quoted(e.kind) +
                ",\"ts\":" + micros(ns) + ",\"args\":" + args + "}");
  } else {
    trace.event("{\"ph\":\"i\",\"s\":\"p\",\"pid\":" + std::to_string(pidOf(e.rank)) +
                ",\"tid\":" + std::to_string(kComputeThread) + ",\"name\":" + quoted(e.kind) +
                ",\"ts\":" + micros(ns) + ",\"args\":" + args + "}");
  }
}

bool isRingHop(const SpanRow& s) {
  return s.kind == "ring-rs" || s.kind == "ring-ag";
}

// A ring hop, a bucket, a shard's push or reply; a hop is the start of a flow arrow ending in the
// hop of the same step and index on the rank it sent to, which received it then.
void writePieces(TraceWriter& trace, const std::vector<SpanRow>& spans,
                 const std::map<int, int64_t>& shift) {
  auto at = [&](const SpanRow& s, int64_t ns) {
    return ns + (shift.count(s.rank) ? shift.at(s.rank) : 0);
  };
  std::map<std::tuple<int, int64_t, int>, const SpanRow*> hops;  // rank, step, part
  for (const SpanRow& s : spans)
    if (isRingHop(s)) hops[{s.rank, s.step, s.part}] = &s;
  int64_t flow = 0;
  for (const SpanRow& s : spans) {
    if (!isCommSpan(s)) continue;
    const std::string name = isRingHop(s)         ? "chunk " + std::to_string(s.chunk)
                             : s.kind == "bucket" ? "bucket " + std::to_string(s.part)
                                                  : s.kind + " shard " + std::to_string(s.part);
    trace.complete(
        pidOf(s.rank), kPieceThread, name, s.kind, at(s, s.start_ns), s.end_ns - s.start_ns,
        "{\"step\":" + std::to_string(s.step) + ",\"part\":" + std::to_string(s.part) +
            ",\"peer\":" + std::to_string(s.peer) + ",\"chunk\":" + std::to_string(s.chunk) +
            ",\"bytes\":" + std::to_string(s.bytes) + "}");
    const auto received = hops.find({s.peer, s.step, s.part});
    if (!isRingHop(s) || received == hops.end()) continue;
    const SpanRow& r = *received->second;
    const std::string id = std::to_string(++flow);
    trace.event("{\"ph\":\"s\",\"id\":" + id + ",\"pid\":" + std::to_string(pidOf(s.rank)) +
                ",\"tid\":" + std::to_string(kPieceThread) + ",\"name\":\"" + name +
                "\",\"cat\":\"" + s.kind + "\",\"ts\":" + micros(at(s, s.start_ns)) + "}");
    trace.event(
        "{\"ph\":\"f\",\"bp\":\"e\",\"id\":" + id + ",\"pid\":" + std::to_string(pidOf(r.rank)) +
        ",\"tid\":" + std::to_string(kPieceThread) + ",\"name\":\"" + name + "\",\"cat\":\"" +
        s.kind + "\",\"ts\":" + micros(at(r, (r.start_ns + r.end_ns) / 2)) + "}");
  }
}

// A sampled step's work on the device, on its own thread: "layer 2 forward", "dev-loss", ...
void writeDevicePiece(TraceWriter& trace, const SpanRow& s, const std::map<int, int64_t>& shift) {
  const int64_t rank_shift = shift.count(s.rank) ? shift.at(s.rank) : 0;
  const std::string name = s.kind == "dev-fwd"   ? "layer " + std::to_string(s.part) + " forward"
                           : s.kind == "dev-bwd" ? "layer " + std::to_string(s.part) + " backward"
                                                 : s.kind.substr(4);
  trace.complete(
      pidOf(s.rank), kDeviceThread, name, s.kind, s.start_ns + rank_shift, s.end_ns - s.start_ns,
      "{\"step\":" + std::to_string(s.step) + ",\"layer\":" + std::to_string(s.part) + "}");
}

// The rows of `rows` inside the window; the launcher's (rank -1) all kept: they judge the run.
template <typename Row>
std::vector<Row> inWindow(std::vector<Row> rows, const TraceWindow& window) {
  if (window.whole()) return rows;
  std::erase_if(rows, [&](const Row& r) {
    return r.rank >= 0 && (!window.hasStep(r.step) || !window.hasRank(r.rank));
  });
  return rows;
}

}  // namespace

bool TraceWindow::whole() const {
  return ranks.empty() && first_step == std::numeric_limits<int64_t>::min() &&
         last_step == std::numeric_limits<int64_t>::max();
}

int64_t writeChromeTrace(RunStore& store, int64_t run_id, std::ostream& out,
                         const TraceWindow& window) {
  const auto run = store.run(run_id);
  if (!run) throw std::runtime_error(store.path() + ": no run with id " + std::to_string(run_id));
  // A window of steps is read alone (the timeline's query), not the whole run.
  const std::vector<StepRow> steps =
      inWindow(window.whole() ? store.steps(run_id)
                              : store.stepsBetween(run_id, window.first_step, window.last_step),
               window);
  const std::vector<SpanRow> spans = inWindow(store.spans(run_id), window);
  const std::map<int, int64_t> shift = rankShifts(steps);
  std::vector<RankRow> ranks = store.ranks(run_id);
  std::erase_if(ranks, [&](const RankRow& r) { return !window.hasRank(r.rank); });
  std::set<int> seen;
  for (const RankRow& r : ranks) seen.insert(r.rank);
  for (const StepRow& s : steps) seen.insert(s.rank);

  // The run's own fields too, so `ranklab import` reads the export back as the same run.
  out << "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"run\":" << run_id
      << ",\"name\":" << quoted(run->name) << ",\"status\":" << quoted(run->status)
      << ",\"world\":" << run->world << ",\"strategy\":" << quoted(run->strategy)
      << ",\"algorithm\":" << quoted(run->algorithm) << ",\"codec\":" << quoted(run->codec)
      << ",\"amp\":" << quoted(run->amp) << ",\"epochs\":" << run->epochs
      << ",\"origin\":" << quoted(run->origin) << ",\"job\":" << quoted(run->job_toml)
      << "},\"traceEvents\":[";
  TraceWriter trace(out);
  nameProcesses(trace, ranks, seen);
  std::map<std::pair<int, int64_t>, int64_t> step_end;
  for (const StepRow& s : steps) {
    const int64_t rank_shift = shift.count(s.rank) ? shift.at(s.rank) : 0;
    writeStep(trace, s, rank_shift);
    step_end[{s.rank, s.step}] = s.time_ns + rank_shift;
  }
  for (const SpanRow& span : spans) {
    if (isCommSpan(span)) continue;  // writePieces
    if (isDeviceSpan(span)) {
      writeDevicePiece(trace, span, shift);
      continue;
    }
    const int64_t rank_shift = shift.count(span.rank) ? shift.at(span.rank) : 0;
    trace.complete(pidOf(span.rank), kSpanThread, span.kind, "span", span.start_ns + rank_shift,
                   span.end_ns - span.start_ns,
                   "{\"after_step\":" + std::to_string(span.step) + "}");
  }
  writePieces(trace, spans, shift);
  for (const EventRow& e : inWindow(store.events(run_id), window))
    writeEvent(trace, e, shift, step_end);
  out << "\n]}\n";
  return trace.count();
}

int64_t exportChromeTrace(RunStore& store, int64_t run_id, const std::string& path,
                          const TraceWindow& window) {
  return writeFileWhole(path, "the trace export", [&](std::ostream& out) {
    return writeChromeTrace(store, run_id, out, window);
  });
}

}  // namespace ranklab
