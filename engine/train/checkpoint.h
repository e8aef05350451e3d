// Checkpoints: everything a run needs to continue exactly as if it had never stopped
// (model, optimizer state, position in the data, dropout stream), in one versioned binary
// file written atomically: a temporary file, fsync, rename over the target, fsync of the
// folder. A reader never sees a half-written checkpoint, only the old one or the new one.
//
// File layout (little-endian):
//   8 bytes  magic "RLABCKPT"
//   u32      format version (kCheckpointVersion)
//   u32      0 (reserved)
//   u64      payload size in bytes
//   u32      CRC-32 of the payload
//   payload  records: u16 name length, name, u8 type (1 = int64, 2 = float32 array,
//            3 = string), u64 element count, the elements
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/codecs/codec_state.h"
#include "engine/optim/optimizer.h"

namespace ranklab {

// 2 added the gradient compression's per-rank state; version 1 files still load (without it).
inline constexpr uint32_t kCheckpointVersion = 2;

class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Checkpoint {
  // The whole model, also where pipeline stages or tensor slices each held a part of it.
  std::string model;          // Network::describe() of the model it holds
  std::vector<float> params;  // the flat parameter buffer
  std::string optimizer;      // Optimizer::kind()
  OptimizerState optimizer_state;
  int64_t step = 0;              // steps completed, over all epochs
  int epoch = 1;                 // the epoch of the last completed step
  int64_t step_in_epoch = 0;     // steps of that epoch completed
  uint64_t training_passes = 0;  // the dropout stream's position
  uint64_t seed = 0;             // the run's seed, world size and batch size fix the data order
  int world = 1;
  int replicas = 1;  // data-parallel replicas among the world's ranks (files without: world)
  int batch_size = 0;
  // AMP's dynamic loss scaling, when the run used it (records amp.*; absent otherwise).
  bool has_loss_scale = false;
  float loss_scale = 0;
  int64_t loss_scale_clean_steps = 0;  // clean steps in a row since the scale last moved
  int64_t loss_scale_skipped_steps = 0;
  // Version 2: the compression the run used (describeCompression(), "none" without) and
  // each rank's codec state, indexed by rank (empty for a strategy that keeps none).
  std::string compression = "none";
  std::vector<CodecState> codec_states;
  uint32_t version = kCheckpointVersion;  // of the file read; 1 holds no compression records
};

// Throws CheckpointError naming the file, the operation and the cause. First removes the
// PATH.tmp-PID files that writers killed mid-write left behind.
void writeCheckpoint(const std::string& path, const Checkpoint& checkpoint);
// Throws CheckpointError naming the file and what is wrong with it (missing, truncated,
// not a checkpoint, a newer format, corrupted, a record missing).
Checkpoint readCheckpoint(const std::string& path);
// The same from the file's bytes; `path` only names it in errors.
Checkpoint parseCheckpoint(const std::string& bytes, const std::string& path);

// Removes PATH.tmp-PID files whose writer process no longer runs.
void removeAbandonedTemporaries(const std::string& path);

}  // namespace ranklab
