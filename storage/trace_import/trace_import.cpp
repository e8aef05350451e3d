#include "storage/trace_import/trace_import.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <stdexcept>

#include "storage/bounded_read.h"
#include "storage/run_origin.h"
#include "storage/trace_import/export_rows.h"
#include "storage/trace_import/pytorch_trace.h"
#include "storage/trace_import/run_rows.h"
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

std::string fileSizeText(const std::string& path) {
  std::error_code ec;
  const auto bytes = fs::file_size(path, ec);
  return ec ? "size unknown" : std::to_string(bytes >> 20) + " MiB";
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
    } catch (const std::bad_alloc&) {
      report.skipped.push_back(path + ": out of memory while reading it (" + fileSizeText(path) +
                               "): free memory or import fewer files");
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
  run.origin = originName(RunOrigin::kPytorchImport);
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

// A ranklab export read back: the run it was made from, on the export's clock.
ImportReport importExport(RunStore& store, RankTrace& trace, const std::string& name,
                          ImportReport report) {
  ExportedRun exported = exportedRun(trace.path, trace.other_data, trace.export_rows);
  if (!name.empty()) exported.run.name = name;
  for (const RankRow& r : exported.ranks)
    report.ranks.push_back("rank " + std::to_string(r.rank) + ": " + trace.path +
                           " (a ranklab trace export)");
  report.events = trace.export_rows.events();
  report.ignored = trace.ignored;
  report.kept_other = int64_t(exported.spans.size());
  report.clocks = "as exported (the ranks lined up at their first common step)";
  report.collective_source = "each step's (a ranklab run)";
  const auto status = trace.other_data.find("status");
  const bool ended =
      status != trace.other_data.end() &&
      (status->second == "done" || status->second == "failed" || status->second == "stopped");
  report.run_id = store.storeWholeRun(exported.run, [&](RunRowSink& sink) {
    ImportedRunRows rows(sink, [&](int) { return trace.path; });
    for (StepRow& s : exported.steps) rows.add(std::move(s));
    for (SpanRow& s : exported.spans) rows.add(std::move(s));
    for (RankRow& r : exported.ranks) rows.add(std::move(r));
    report.steps = rows.steps();
    return rows.end(ended ? status->second : "done");
  });
  return report;
}

// One file named twice (the same path, or a link or hard link to it) would be two ranks of
// one trace: refused, naming both.
void refuseRepeatedFiles(const std::vector<std::string>& files) {
  std::map<std::pair<dev_t, ino_t>, std::string> seen;
  for (const std::string& file : files) {
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0) continue;  // the reader says why
    const auto [it, added] = seen.try_emplace({st.st_dev, st.st_ino}, file);
    if (!added)
      throw std::runtime_error(
          (it->second == file ? file + " is named twice"
                              : it->second + " and " + file + " are the same file (one inode)") +
          ": each rank's trace is imported once; nothing stored");
  }
}

// The traces made into rows and stored whole as one run.
ImportReport storeTraces(RunStore& store, std::vector<RankTrace>& traces,
                         const std::vector<std::string>& paths, const std::string& name,
                         ImportReport report) {
  for (RankTrace& t : traces) {
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
  for (const RankTrace& t : traces) {
    report.events += int64_t(t.events.size());
    report.ignored += t.ignored;
  }
  report.clocks = clockNote(clocks);
  report.collective_source = sourceName(commonCollectiveSource(traces));
  std::map<int, std::string> file_of_rank;
  for (size_t r = 0; r < traces.size(); ++r) file_of_rank[ids[r]] = traces[r].path;
  report.run_id = store.storeWholeRun(newRunOf(traces, paths, name), [&](RunRowSink& sink) {
    ImportedRunRows rows(sink, [&](int rank) { return file_of_rank[rank]; });
    const ImportedCounts counts = traceRows(traces, ids, clocks, rows);
    for (size_t r = 0; r < traces.size(); ++r) rows.add(rankRowOf(traces[r], ids[r]));
    report.steps = rows.steps();
    report.collectives = counts.collectives;
    report.collectives_with_bytes = counts.collectives_with_bytes;
    report.device_pieces = counts.device_pieces;
    report.kept_other = counts.kept_other;
    return rows.end("done");
  });
  return report;
}

}  // namespace

std::vector<std::string> traceFilesAt(const std::string& path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (status.type() == fs::file_type::not_found)
    throw std::runtime_error(path + ": no such file or folder");
  if (ec) throw std::runtime_error(path + ": cannot stat: " + errnoCause(ec.value()));
  if (!fs::is_directory(status)) return {path};
  fs::directory_iterator folder(path, ec);
  if (ec) throw std::runtime_error(path + ": cannot list it: " + errnoCause(ec.value()));
  std::vector<std::string> files;
  for (const auto& entry : folder)
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
  refuseRepeatedFiles(files);
  std::vector<RankTrace> traces = readAll(files, report, progress);
  try {
    return storeTraces(store, traces, paths, name, std::move(report));
  } catch (const std::bad_alloc&) {
    std::string names;
    for (const RankTrace& t : traces) names += (names.empty() ? "" : ", ") + t.path;
    throw std::runtime_error(names +
                             ": out of memory making and storing the run's rows (nothing "
                             "stored): free memory or import fewer files");
  }
}

}  // namespace ranklab
