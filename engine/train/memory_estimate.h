// Each rank's peak memory, estimated from the resolved job before anything is launched: the
// memory ledger's parts (docs/memory.md) counted from the model's layer shapes without
// allocating the model, so a job too big for its machine is refused before it is built.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "engine/job/job_spec.h"

#include "engine/model/layer.h"

namespace ranklab {

// A sample's shape, the classes, and the bytes of the training and test sets a rank loads
// (samples as floats, labels as bytes), from the data keys alone: nothing is read.
struct DataShape {
  Shape sample;
  int classes = 0;
  size_t bytes = 0;
};
DataShape dataShapeOf(const JobSpec& job);

// What a rank holds at its peak, in bytes, by the ledger's parts (storage/step_record.h's
// mem_*), plus the data set it loads and the process itself.
struct RankMemory {
  int rank = 0;
  int stage = 0;           // its pipeline stage
  bool server = false;     // a parameter server (ps-*), not a training rank
  size_t params = 0;       // its flat parameters, or its ZeRO 3 shard
  size_t grads = 0;        // its flat gradient, or its ZeRO 2/3 shard
  size_t optimizer = 0;    // the optimizer's state (ZeRO: its shard's)
  size_t activations = 0;  // layer outputs and what layers keep for backward, every copy
  size_t workspace = 0;    // the outputs' gradients (the ledger's "workspace"), conv buffers
  size_t buffers = 0;      // ZeRO's one-layer scratches and held layers
  size_t data = 0;         // the training and test sets every rank loads whole
  size_t baseline = 0;     // the process's private pages beyond these (measured)
  size_t total() const;
};

// A rank's private memory beyond everything above (its own pages: Anonymous in smaps_rollup,
// which no other rank shares): code's data and bss (libcublasLt's alone ~80 MB), Open MPI's
// and ZeroMQ's buffers, the heap's slack, page tables. Measured 2026-11-29 on the 2-core
// 24 GB VM (CUDA build) by bench/run-memory-estimate (bench/memory_sample.py): quickstart,
// N ranks, rank 0 slowed per step, each rank's smaps_rollup mid-run: Anonymous 341 MB at N = 1, 4,
// 16, less 219.6 MB of data and 3.6 MB of ledger, + 1.3 MB of page tables (/proc/meminfo).
inline constexpr size_t kRankProcessBaseline = 120'000'000;

// What a host holds once for all its ranks: the shared libraries' pages every rank maps but
// the kernel holds once (libdnnl, OpenBLAS, Open MPI, CUDA's; a rank's Shared_Clean +
// Shared_Dirty, 88.7 MB at N = 4 and 16), and the launcher's own processes (PSS: mpirun
// 13.1 MB, ranklab 7.6 MB). Same machine, date and command as kRankProcessBaseline.
inline constexpr size_t kHostSharedBytes = 110'000'000;

struct MemoryEstimate {
  std::vector<RankMemory> ranks;  // every process of the job, by rank (servers last)
  // The rank needing most (its index in `ranks`).
  const RankMemory& peak() const;
  // True when the ranks differ (pipeline stages, servers): worth a table.
  bool ranksDiffer() const;
};

// The estimate for `job` (resolved: its keys checked). Throws std::invalid_argument naming the
// model key whose shape does not fit the data, as the launch would.
// `evaluated`: the outputs sized for an evaluation's batch, as after the first one; false:
// for the training micro-batch alone (the ledger a step records before any evaluation).
MemoryEstimate estimateMemory(const JobSpec& job, bool evaluated = true);

// The key whose value drives the peak rank's memory most ("model.layers[3] = 65536"):
// the one whose halving lowers that rank's estimate most.
std::string drivingKey(const JobSpec& job);

// "68.7 GB", "512 MB", "940 KB": decimal units, three digits.
std::string byteText(size_t bytes);
// "parameters 17.2 GB, gradients 17.2 GB, ..." : the parts of one rank that are not zero.
std::string partsText(const RankMemory& rank);

}  // namespace ranklab
