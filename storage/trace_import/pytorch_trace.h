// One rank's PyTorch profiler trace, read as a stream: the Chrome-trace JSON that
// torch.profiler writes (tensorboard_trace_handler, export_chrome_trace), in both of its
// forms: Kineto's object ({"traceEvents": [...], "distributedInfo": {...}}) and the legacy
// profiler's bare array (PyTorch builds without Kineto, such as Debian's 1.13). Each
// complete event is kept as a few numbers (its class, times, thread, name's index), never
// as JSON, so a trace of gigabytes reads in bounded memory.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "storage/bounded_read.h"
#include "storage/trace_import/export_rows.h"
#include "storage/trace_import/trace_numbers.h"

namespace ranklab {

// What an event is to the importer, from its name and category.
enum class TraceClass : uint8_t {
  kStep,        // ProfilerStep#N: one training step (prof.step())
  kData,        // enumerate(DataLoader)#...: loading the batch
  kBackward,    // autograd::engine::evaluate_function: one backward node
  kOptimizer,   // Optimizer.step#... / Optimizer.zero_grad#...
  kCollective,  // a collective's work: gloo:/nccl: ops, c10d:: ops, record_param_comms
  kKernel,      // a GPU kernel (category "kernel")
  kMemcpy,      // a GPU copy or set (categories gpu_memcpy, gpu_memset)
  kOther,       // everything else (operators, Python functions, annotations)
};

// How sure a collective event is to be the collective's own work (higher is better): a
// NCCL kernel on the GPU, a backend's op (gloo:all_reduce, on gloo's worker thread), the
// c10d op that only enqueues it. The importer uses the best kind a trace has.
enum class CollectiveSource : uint8_t { kNone, kC10dOp, kParamComms, kBackendOp, kNcclKernel };

struct TraceEvent {
  int64_t start_ns = 0;  // on the trace's own clock
  int64_t end_ns = 0;
  int64_t bytes = 0;   // a collective's message, where the trace records it
  int32_t name = 0;    // index into RankTrace::names
  int32_t thread = 0;  // index into RankTrace::threads
  int32_t step = -1;   // kStep: N of ProfilerStep#N
  TraceClass kind = TraceClass::kOther;
  CollectiveSource source = CollectiveSource::kNone;
  uint8_t op = 0;  // kCollective: index into kCollectiveSpanKinds (storage/records.h)
};

struct RankTrace {
  std::string path;
  std::optional<int> rank;  // from distributedInfo; none in the legacy form
  std::optional<int> world;
  std::string backend;  // distributedInfo's ("gloo", "nccl") or the ops' prefix
  std::vector<TraceEvent> events;
  std::vector<std::string> names;    // each distinct event name once
  std::vector<std::string> threads;  // "pid/tid" of each distinct thread
  int64_t ignored = 0;               // metadata, counters, instants, flows: not durations
  bool saw_ddp = false;              // DistributedDataParallel.forward
  bool saw_fsdp = false;             // FullyShardedDataParallel
  // A ranklab export instead (its "otherData" names the run): its fields, and its events
  // made into rows as they are read (never kept as events: a crafted file of empty ones
  // costs nothing).
  std::map<std::string, std::string> other_data;
  ExportRows export_rows;
  bool isRanklabExport() const { return other_data.count("run") > 0; }
};

// A trace file may hold at most this; read as it is, a device, a FIFO or a larger file is
// refused naming it.
inline constexpr ReadLimit kTraceFileLimit{uint64_t{4} << 30, "trace files"};

// Reads `path`; `progress` (may be empty) is told the bytes read so far now and then.
// Throws std::runtime_error naming the file and the byte offset of bad JSON, a JSON file
// that is no trace (another tool's), a PyTorch trace with no ProfilerStep#N (no steps), a
// step number that is garbled or seen twice, and a distributedInfo rank or world size out
// of range (never clamped or merged: that would invent a rank or a step).
RankTrace readPytorchTrace(const std::string& path,
                           const std::function<void(int64_t bytes)>& progress = {});

// The same from an open file (`name` in the messages): the fuzz target's way in.
RankTrace readPytorchTrace(std::FILE* file, const std::string& name,
                           const std::function<void(int64_t bytes)>& progress = {});

// The class of an event from its name and category ("" when the trace has none).
TraceClass classifyTraceEvent(const std::string& name, const std::string& category,
                              CollectiveSource* source, uint8_t* op);

}  // namespace ranklab
