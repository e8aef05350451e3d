// Test support: datasets small enough for unit tests, and a training job run with its
// ranks as threads over the in-memory transport, recording what each rank reported.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "comm/memory/thread_communicator.h"
#include "engine/data/idx_dataset.h"
#include "engine/train/ps_server.h"
#include "engine/train/trainer.h"

namespace ranklab::testing {

// Sample i has both features equal to i, so a batch tells which samples it holds.
inline Dataset numberedSet(int64_t count) {
  Dataset d;
  d.count = count;
  d.features = 2;
  d.classes = 10;
  for (int64_t i = 0; i < count; ++i) {
    d.images.insert(d.images.end(), {static_cast<float>(i), static_cast<float>(i)});
    d.labels.push_back(static_cast<uint8_t>(i % 10));
  }
  return d;
}

// The first 4000 training and 1000 test images of Fashion-MNIST, loaded once.
inline const Dataset& smallTrainSet() {
  static const Dataset d = loadFashionMnist("/usr/share/datasets/fashion-mnist", "train", 4000);
  return d;
}
inline const Dataset& smallTestSet() {
  static const Dataset d = loadFashionMnist("/usr/share/datasets/fashion-mnist", "t10k", 1000);
  return d;
}

class RunRecorder : public TrainObserver {
 public:
  void onStep(const StepStats& s) override {
    steps.push_back(s.step);
    losses.push_back(s.loss);
    stats.push_back(s);
  }
  void onEval(const EvalStats& e) override { evals.push_back(e); }
  void onServerLoad(const ServerLoad& l) override { loads.push_back(l); }
  void onEvent(const std::string& kind, const std::string& text, int64_t /*step*/) override {
    events.push_back(kind + ": " + text);
  }
  void onPause() override { pauses.push_back(steps.size()); }
  void onDeviceSpans(int64_t step, const DeviceSpans& spans) override { device[step] = spans; }
  std::vector<int64_t> steps;
  std::vector<double> losses;
  std::vector<StepStats> stats;
  std::vector<EvalStats> evals;
  std::vector<ServerLoad> loads;          // server ranks only
  std::vector<std::string> events;        // "kind: text"
  std::vector<size_t> pauses;             // how many steps had been seen at each pause
  std::map<int64_t, DeviceSpans> device;  // the sampled steps' device pieces
};

// Runs `job` with one thread per process (training ranks, then parameter servers);
// rethrows the first rank's error, if any.
inline std::vector<RunRecorder> trainWithThreads(const JobSpec& job,
                                                 const Dataset& train_set = smallTrainSet(),
                                                 const Dataset& test_set = smallTestSet()) {
  const int world = processCount(job);
  ThreadRendezvous rendezvous(world, job.parallel.ranks_per_host);
  std::vector<RunRecorder> recorders(world);
  std::vector<std::exception_ptr> errors(world);
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      try {
        ThreadCommunicator comm(rendezvous, r);
        if (isServerRank(job, r)) {
          serveParameters(job, comm, recorders[r]);
          return;
        }
        train(job, comm, train_set, test_set, recorders[r]);
      } catch (const std::exception& e) {
        // Say so at once: a rank that fails alone leaves the others waiting in a collective.
        std::fprintf(stderr, "rank %d: %s\n", r, e.what());
        errors[r] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& error : errors) {
    if (error) std::rethrow_exception(error);
  }
  return recorders;
}

// Largest relative gap between two loss curves of the same length (EXPECTs the lengths).
inline double largestGap(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    worst = std::max(worst, std::abs(a[i] - b[i]) / std::max(1e-12, std::abs(b[i])));
  return worst;
}

// Largest relative gap between two vectors of the same length, over their largest value.
inline double largestVectorGap(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0, scale = 1e-12;
  for (float v : b) scale = std::max(scale, static_cast<double>(std::abs(v)));
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    worst = std::max(worst, std::abs(static_cast<double>(a[i]) - b[i]) / scale);
  return worst;
}

// Whether any of the rank's events holds `text`.
inline bool anyEventSays(const RunRecorder& rank, const std::string& text) {
  return std::any_of(rank.events.begin(), rank.events.end(),
                     [&](const std::string& e) { return e.find(text) != std::string::npos; });
}

// Two runs of the same job that must agree bit for bit: every rank's steps, losses and last
// test loss.
inline void expectSameRun(const std::vector<RunRecorder>& got, const std::vector<RunRecorder>& want,
                          const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t r = 0; r < want.size(); ++r) {
    EXPECT_EQ(got[r].steps, want[r].steps) << what << " rank " << r;
    EXPECT_EQ(got[r].losses, want[r].losses) << what << " rank " << r;
    ASSERT_EQ(got[r].evals.size(), want[r].evals.size()) << what << " rank " << r;
    if (!want[r].evals.empty()) {
      EXPECT_EQ(got[r].evals.back().test_loss, want[r].evals.back().test_loss) << what;
    }
  }
}

}  // namespace ranklab::testing
