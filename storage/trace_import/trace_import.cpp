#include "storage/trace_import/trace_import.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <stdexcept>

#include "storage/trace_import/export_rows.h"
#include "storage/trace_import/pytorch_trace.h"
#include "storage/trace_import/trace_steps.h"

namespace ranklab {
namespace {

namespace fs = std::filesystem;

const char* sourceName(CollectiveSource source) {
  switch (source) {
    case CollectiveSource::kNcclKernel:
      return "NCCL kernels on the GPU";
    case CollectiveSource::kBackendOp:
      return "the backend's ops (gloo:/nccl: events)";
    case CollectiveSource::kParamComms:
      return "record_param_comms events";
    case CollectiveSource::kC10dOp:
      return "c10d ops (their enqueueing only)";
    case CollectiveSource::kNone:
      break;
  }
  return "none found";
}

// Each file read, or listed as skipped with why; progress told every 64 Ki events.
std::vector<RankTrace> readAll(const std::vector<std::string>& paths, ImportReport& report,
                               const std::function<void(const std::string&)>& progress) {
  std::vector<RankTrace> traces;
  for (const std::string& path : paths) {
    try {
      traces.push_back(readPytorchTrace(path, [&](int64_t bytes) {
        if (progress) progress(path + ": " + std::to_string(bytes >> 20) + " MiB read");
      }));
    } catch (const std::exception& e) {
      report.skipped.push_back(e.what());
    }
  }
  if (traces.empty()) {
    std::string why;
    for (const std::string& s : report.skipped) why += "\n  " + s;
    throw std::runtime_error("no trace imported:" + why);
  }
  return traces;
}

// The traces in rank order, and each one's rank: distributedInfo's where every trace has
// one, else the order of the files.
std::vector<int> orderRanks(std::vector<RankTrace>& traces, ImportReport& report) {
  const bool told = std::all_of(traces.begin(), traces.end(),
                                [](const RankTrace& t) { return t.rank.has_value(); });
  std::vector<int> ids;
  if (!told) {
    for (size_t r = 0; r < traces.size(); ++r) {
      ids.push_back(int(r));
      report.ranks.push_back("rank " + std::to_string(r) + ": " + traces[r].path +
                             " (file order: no distributedInfo in the trace)");
    }
    return ids;
  }
  std::stable_sort(traces.begin(), traces.end(),
                   [](const RankTrace& a, const RankTrace& b) { return *a.rank < *b.rank; });
  for (size_t r = 0; r < traces.size(); ++r) {
    if (r > 0 && *traces[r].rank == *traces[r - 1].rank)
      throw std::runtime_error("traces of different runs: " + traces[r - 1].path + " and " +
                               traces[r].path + " both say rank " +
                               std::to_string(*traces[r].rank));
    if (traces[r].world != traces[0].world)
      throw std::runtime_error("traces of different runs: " + traces[0].path + " says world size " +
                               std::to_string(traces[0].world.value_or(0)) + ", " + traces[r].path +
                               " " + std::to_string(traces[r].world.value_or(0)));
    ids.push_back(*traces[r].rank);
    report.ranks.push_back("rank " + std::to_string(ids.back()) + ": " + traces[r].path +
                           " (distributedInfo)");
  }
  return ids;
}

// torch's tensorboard_trace_handler names files <host>_<pid>.<ms>.pt.trace.json.
RankRow rankRowOf(const RankTrace& trace, int rank) {
  RankRow row;
  row.rank = rank;
  row.status = "done";
  const std::string base = fs::path(trace.path).filename().string();
  const std::string stem = base.substr(0, base.find('.'));
  const size_t underscore = stem.rfind('_');
  row.host = underscore == std::string::npos ? stem : stem.substr(0, underscore);
  if (underscore != std::string::npos) row.pid = std::atoll(stem.c_str() + underscore + 1);
  return row;
}

NewRun newRunOf(const std::vector<RankTrace>& traces, const std::vector<std::string>& paths,
                const std::string& name) {
  NewRun run;
  run.name = name.empty() ? fs::path(paths[0]).filename().string() : name;
  run.job_path = paths[0];
  run.job_toml = "# imported by ranklab import from " + std::to_string(traces.size()) +
                 " PyTorch profiler traces\n";
  run.world = int(traces.size());
  run.strategy = traces[0].saw_fsdp  ? "pytorch-fsdp"
                 : traces[0].saw_ddp ? "pytorch-ddp"
                                     : "pytorch";
  run.algorithm = traces[0].backend.empty() ? "unknown" : traces[0].backend;
  run.codec = "none";
  run.amp = "unknown";  // the traces do not say
  run.origin = "pytorch-import";
  return run;
}

std::string clockNote(const ClockAlignment& clocks) {
  if (clocks.collectives == 0) return "not aligned: no collective every rank took part in";
  char text[160];
  std::snprintf(text, sizeof text,
                "aligned at the ends of %d collectives (median shift); their ends then lie "
                "within %.1f us of each other",
                clocks.collectives, double(clocks.spread_ns) / 1e3);
  return text;
}

// Each rank's training time, from its first step's start to its last step's end.
void setTrainTimes(RecordBatch& batch) {
  std::map<int, std::pair<int64_t, int64_t>> span;  // rank: first start, last end
  for (const StepRow& s : batch.steps) {
    const int64_t start = s.time_ns - (phaseTotal(s.phases()) - s.comm_hidden_ns);
    auto [it, added] = span.try_emplace(s.rank, start, s.time_ns);
    it->second = {std::min(it->second.first, start), std::max(it->second.second, s.time_ns)};
  }
  for (RankRow& r : batch.ranks)
    if (span.count(r.rank)) r.train_ns = span[r.rank].second - span[r.rank].first;
}

// Stores `batch` as a new run made of `run`, ended with `status`; returns its id.
int64_t storeRun(RunStore& store, const NewRun& run, RecordBatch& batch,
                 const std::string& status) {
  setTrainTimes(batch);
  int64_t wall_ns = 0, train_ns = 0;
  for (const StepRow& s : batch.steps) wall_ns = std::max(wall_ns, s.time_ns);
  for (const RankRow& r : batch.ranks) train_ns = std::max(train_ns, r.train_ns);
  const int64_t id = store.createRun(run);
  for (auto& s : batch.steps) s.run_id = id;
  for (auto& s : batch.spans) s.run_id = id;
  for (auto& r : batch.ranks) r.run_id = id;
  store.write(batch);
  store.finishRun(id, status, double(wall_ns) / 1e9, double(train_ns) / 1e9);
  return id;
}

// A ranklab export read back: the run it was made from, on the export's clock.
ImportReport importExport(RunStore& store, const RankTrace& trace, const std::string& name,
                          ImportReport report) {
  ExportedRun exported = exportedRun(trace);
  if (!name.empty()) exported.run.name = name;
  for (const RankRow& r : exported.ranks)
    report.ranks.push_back("rank " + std::to_string(r.rank) + ": " + trace.path +
                           " (a ranklab trace export)");
  report.events = int64_t(trace.export_events.size());
  report.steps = int64_t(exported.steps.size());
  report.kept_other = int64_t(exported.spans.size());
  report.clocks = "as exported (the ranks lined up at their first common step)";
  report.collective_source = "each step's (a ranklab run)";
  const auto status = trace.other_data.find("status");
  const bool ended =
      status != trace.other_data.end() &&
      (status->second == "done" || status->second == "failed" || status->second == "stopped");
  RecordBatch batch;
  batch.ranks = std::move(exported.ranks);
  batch.steps = std::move(exported.steps);
  batch.spans = std::move(exported.spans);
  report.run_id = storeRun(store, exported.run, batch, ended ? status->second : "done");
  return report;
}

}  // namespace

std::vector<std::string> traceFilesAt(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec))  // a folder this account may not search: not "no such file"
    throw std::runtime_error(
        path + ": " +
        (ec ? "cannot stat: " + errnoCause(ec.value()) : std::string("no such file or folder")));
  if (!fs::is_directory(path, ec)) return {path};
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(path))
    if (entry.is_regular_file() && entry.path().extension() == ".json")
      files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  if (files.empty()) throw std::runtime_error(path + ": a folder without .json trace files");
  return files;
}

ImportReport importPytorchTraces(RunStore& store, const std::vector<std::string>& paths,
                                 const std::string& name,
                                 const std::function<void(const std::string&)>& progress) {
  ImportReport report;
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    const auto found = traceFilesAt(p);
    files.insert(files.end(), found.begin(), found.end());
  }
  std::vector<RankTrace> traces = readAll(files, report, progress);
  for (const RankTrace& t : traces) {
    if (!t.isRanklabExport()) continue;
    if (traces.size() > 1)
      throw std::runtime_error(t.path +
                               " is a ranklab trace export, which holds every rank of its run: "
                               "import it alone");
    return importExport(store, t, name, report);
  }
  const std::vector<int> ids = orderRanks(traces, report);
  lendSizes(traces);
  const ClockAlignment clocks = alignClocks(traces);
  ImportedRows rows = traceRows(traces, clocks);
  for (auto& s : rows.steps) s.rank = ids[size_t(s.rank)];
  for (auto& s : rows.spans) s.rank = ids[size_t(s.rank)];
  for (const RankTrace& t : traces) {
    report.events += int64_t(t.events.size());
    report.ignored += t.ignored;
  }
  report.steps = int64_t(rows.steps.size());
  report.collectives = rows.collectives;
  report.collectives_with_bytes = rows.collectives_with_bytes;
  report.device_pieces = rows.device_pieces;
  report.kept_other = rows.kept_other;
  report.clocks = clockNote(clocks);
  report.collective_source = sourceName(commonCollectiveSource(traces));
  RecordBatch batch;
  batch.steps = std::move(rows.steps);
  batch.spans = std::move(rows.spans);
  for (size_t r = 0; r < traces.size(); ++r) batch.ranks.push_back(rankRowOf(traces[r], ids[r]));
  report.run_id = storeRun(store, newRunOf(traces, paths, name), batch, "done");
  return report;
}

}  // namespace ranklab
