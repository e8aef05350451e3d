// Two small stored runs in a temporary run store, for the GUI tests of the runs, compare
// and timeline pages: "ring" (2 ranks) and "mpi" (3 ranks, algorithm mpi), 8 steps each.
#pragma once

#include <QTemporaryDir>

#include "engine/job/job_file.h"
#include "engine/job/job_spec.h"
#include "storage/run_store.h"

namespace ranklab::gui_test {

constexpr int64_t kMs = 1'000'000;

inline int64_t storeRun(RunStore& store, const JobSpec& job, int steps) {
  NewRun run;
  run.name = job.name;
  run.world = job.parallel.ranks;
  run.strategy = job.parallel.strategy;
  run.algorithm = job.parallel.algorithm;
  run.codec = "none";
  run.amp = "fp32";
  run.job_toml = toTomlText(job);
  const int64_t id = store.createRun(run);
  RecordBatch batch;
  for (int rank = 0; rank < job.parallel.ranks; ++rank) {
    for (int step = 0; step < steps; ++step) {
      StepRow s;
      s.run_id = id;
      s.rank = rank;
      s.step = step;
      s.samples = 32;
      s.forward_ns = 4 * kMs;
      s.backward_ns = 6 * kMs;
      s.wait_ns = (rank + 1) * kMs;
      s.comm_ns = 2 * kMs;
      s.loss = 2.0 / (step + 1);
      s.bytes_tx = 1000;
      s.time_ns = (step + 1) * 20 * kMs + rank * 3 * kMs;
      batch.steps.push_back(s);
    }
  }
  store.write(batch);
  store.finishRun(id, "done", 1.0, 0.8);
  return id;
}

struct Fixture {
  QTemporaryDir dir;
  QString db;
  int64_t ring = 0, mpi = 0;
  Fixture() : db(dir.filePath(QStringLiteral("runs.db"))) {
    RunStore store(db.toStdString());
    JobSpec a;
    a.name = "ring";
    a.parallel.ranks = 2;
    ring = storeRun(store, a, 8);
    JobSpec b = a;
    b.name = "mpi";
    b.parallel.ranks = 3;
    b.parallel.algorithm = "mpi";
    mpi = storeRun(store, b, 8);
  }
};

}  // namespace ranklab::gui_test
