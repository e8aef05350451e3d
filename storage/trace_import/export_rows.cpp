#include "storage/trace_import/export_rows.h"

#include <algorithm>
#include <map>
#include <string>

#include "storage/run_origin.h"
#include "storage/trace_import/trace_numbers.h"

namespace ranklab {
namespace {

// The export's thread ids (storage/chrome_trace.h's TraceThread), kept apart from it: the
// importer reads files, not the writer's code.
constexpr int kCompute = 1, kComm = 2, kSpans = 3, kPieces = 4, kDevice = 5;

int64_t* phaseField(StepRow& s, const std::string& name) {
#define RANKLAB_PHASE_REF(phase, kind) \
  if (name == #phase) return &s.phase##_ns;
  RANKLAB_STEP_PHASES(RANKLAB_PHASE_REF)
#undef RANKLAB_PHASE_REF
  return nullptr;
}

int64_t arg(const ExportEvent& e, const char* key, int64_t fallback = 0) {
  const auto it = e.args.find(key);
  return it == e.args.end() ? fallback
                            : clampedInteger(it->second, -(int64_t(1) << 62), int64_t(1) << 62);
}

NewRun runOf(const std::string& path, const std::map<std::string, std::string>& d) {
  auto field = [&](const char* key) { return d.count(key) ? d.at(key) : std::string(); };
  NewRun run;
  run.name = field("name");
  run.job_path = path;
  run.job_toml = field("job");
  run.world = int(integerIn(field("world"), 1, 1 << 20));
  run.strategy = field("strategy");
  run.algorithm = field("algorithm");
  run.codec = field("codec");
  run.amp = field("amp");
  run.epochs = int(integerIn(field("epochs"), 0, 1 << 20));
  run.origin = originName(RunOrigin::kRanklabTrace);
  return run;
}

// "rank 2 (node1)" -> host "node1".
RankRow rankOf(const ExportEvent& e) {
  RankRow row;
  row.rank = e.pid - 1;
  row.status = "done";
  const size_t open = e.text.find('('), close = e.text.rfind(')');
  if (open != std::string::npos && close != std::string::npos && close > open)
    row.host = e.text.substr(open + 1, close - open - 1);
  return row;
}

void addPhase(std::map<std::pair<int, int64_t>, StepRow>& steps, const ExportEvent& e) {
  StepRow& s = steps[{e.pid - 1, arg(e, "step")}];
  s.rank = e.pid - 1;
  s.step = arg(e, "step");
  s.epoch = int(arg(e, "epoch", s.epoch));
  s.samples = arg(e, "samples", s.samples);
  // Saturating: a crafted export repeats a phase without end (the sums are bounded later).
  if (int64_t* field = phaseField(s, e.name)) *field = saturatingAdd(*field, e.dur_ns);
  s.time_ns = std::max(s.time_ns, e.start_ns + e.dur_ns);
  if (e.name == "comm") {
    s.bytes_tx = arg(e, "bytes_tx");
    s.bytes_rx = arg(e, "bytes_rx");
    s.comm_hidden_ns = arg(e, "hidden_ns");
  }
}

SpanRow spanOf(const ExportEvent& e) {
  SpanRow s;
  s.rank = e.pid - 1;
  s.start_ns = e.start_ns;
  s.end_ns = e.start_ns + e.dur_ns;
  if (e.tid == kSpans) {
    s.kind = e.name;
    s.step = arg(e, "after_step");
  } else {
    s.kind = e.cat;
    s.step = arg(e, "step");
    s.part = int(arg(e, e.tid == kDevice ? "layer" : "part", -1));
    s.peer = int(arg(e, "peer", -1));
    s.chunk = int(arg(e, "chunk", -1));
    s.bytes = arg(e, "bytes");
  }
  return s;
}

}  // namespace

bool ExportRows::add(const ExportEvent& e) {
  ++events_;
  if (e.ph == 'M' && e.name == "process_name") {
    ranks_.push_back(rankOf(e));
    return true;
  }
  if (e.ph == 'C' && e.name == "loss" && e.args.count("loss")) {
    losses_[{e.pid - 1, e.start_ns}] = e.args.at("loss");
    return true;
  }
  if (e.ph != 'X') return false;
  if (e.tid == kCompute || e.tid == kComm)
    addPhase(steps_, e);
  else if (e.tid == kSpans || e.tid == kPieces || e.tid == kDevice)
    spans_.push_back(spanOf(e));
  else
    return false;
  return true;
}

void ExportRows::moveInto(ExportedRun& out) {
  out.ranks = std::move(ranks_);
  out.spans = std::move(spans_);
  for (auto& [key, s] : steps_) {
    const auto loss = losses_.find({s.rank, s.time_ns});
    if (loss != losses_.end()) s.loss = loss->second;
    out.steps.push_back(s);
  }
  steps_.clear();
  losses_.clear();
}

ExportedRun exportedRun(const std::string& path,
                        const std::map<std::string, std::string>& other_data, ExportRows& rows) {
  ExportedRun out;
  out.run = runOf(path, other_data);
  rows.moveInto(out);
  return out;
}

}  // namespace ranklab
