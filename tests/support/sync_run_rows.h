// Synchronous runs written through the real store API for the analysis tests: every step each
// rank starts with the others, computes for its own time, waits for the last to arrive, moves
// bytes for 2 ms and updates for 1 ms, as a ranklab run's step rows record it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "storage/run_store.h"

namespace ranklab::testing {

struct SyncRunShape {
  int world = 4;
  int64_t steps = 10;
  std::string status = "done";
  // A rank's compute (data, forward, backward) in a step, ns.
  std::function<int64_t(int rank, int64_t step)> compute_ns = [](int, int64_t) {
    return int64_t{10'000'000};
  };
  int stopped_rank = -1;  // its rows end at stopped_step; the others go on without it
  int64_t stopped_step = 0;
  std::vector<SpanRow> spans = {};    // run_id stamped here
  std::vector<EventRow> events = {};  // run_id stamped here
};

inline constexpr int64_t kAllreducesPerStep = 2;

inline bool stepsIn(const SyncRunShape& shape, int rank, int64_t step) {
  return rank != shape.stopped_rank || step <= shape.stopped_step;
}

// One step of every rank still going: the last to arrive sets everyone's barrier exit.
inline void addSyncStep(RecordBatch& batch, int64_t run_id, const SyncRunShape& shape,
                        int64_t step) {
  constexpr int64_t kData = 1'000'000, kComm = 2'000'000, kUpdate = 1'000'000;
  const int64_t start = step * 100'000'000;
  int64_t last_arrival = start;
  for (int r = 0; r < shape.world; ++r)
    if (stepsIn(shape, r, step))
      last_arrival = std::max(last_arrival, start + kData + shape.compute_ns(r, step));
  for (int r = 0; r < shape.world; ++r) {
    if (!stepsIn(shape, r, step)) continue;
    StepRow s;
    s.run_id = run_id;
    s.rank = r;
    s.step = step;
    s.samples = 32;
    s.data_ns = kData;
    s.forward_ns = shape.compute_ns(r, step) / 3;
    s.backward_ns = shape.compute_ns(r, step) - s.forward_ns;
    s.wait_ns = last_arrival - (start + kData + shape.compute_ns(r, step));
    s.comm_ns = kComm;
    s.update_ns = kUpdate;
    s.bytes_tx = 1'000'000;
    s.allreduces = kAllreducesPerStep;
    s.time_ns = last_arrival + kComm + kUpdate;
    batch.steps.push_back(s);
  }
}

// Returns the run's id; the run is finished with shape.status.
inline int64_t storeSyncRun(RunStore& store, const SyncRunShape& shape) {
  NewRun run;
  run.name = "sync-" + std::to_string(shape.world);
  run.world = shape.world;
  run.strategy = "allreduce";
  run.algorithm = "ring";
  run.codec = "none";
  run.amp = "off";
  run.epochs = 1;
  const int64_t id = store.createRun(run);
  RecordBatch batch;
  for (int r = 0; r < shape.world; ++r) {
    RankRow rank;
    rank.run_id = id;
    rank.rank = r;
    rank.host = "node" + std::to_string(r / 2);
    rank.status = "running";
    batch.ranks.push_back(rank);
  }
  for (int64_t step = 1; step <= shape.steps; ++step) addSyncStep(batch, id, shape, step);
  for (SpanRow span : shape.spans) {
    span.run_id = id;
    batch.spans.push_back(span);
  }
  for (EventRow event : shape.events) {
    event.run_id = id;
    batch.events.push_back(event);
  }
  store.write(batch);
  store.finishRun(id, shape.status, double(shape.steps) / 10, double(shape.steps) / 10);
  return id;
}

}  // namespace ranklab::testing
