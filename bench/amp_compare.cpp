// bench_amp: the quickstart MLP (784-256-128-10, Fashion-MNIST, batch 64, SGD lr 0.05
// momentum 0.9, 2 epochs) trained on one rank in fp32, bf16 and fp16 AMP, in one run:
// training samples/s (best over all runs, run order alternating), final test accuracy
// (mean over seeds 1..S: one seed's accuracy moves by a few tenths of a point with any change
// of rounding), final loss scale and skipped (overflow) steps of seed 1.
// Usage: bench_amp [--threads T] [--seeds S] [--epochs E] [--batch B]
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "comm/memory/thread_communicator.h"
#include "engine/data/idx_dataset.h"
#include "engine/job/job_file.h"
#include "engine/job/job_spec.h"
#include "engine/train/trainer.h"
#include "kernels/cpu/bf16_gemm.h"
#include "kernels/cpu/gemm.h"

namespace ranklab {
namespace {

// CPU time of this thread, which runs the training loop (OpenBLAS and oneDNN with one
// thread run in it too): on a shared machine it does not count time other processes took.
double threadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

class AmpTotals : public TrainObserver {
 public:
  void onStep(const StepStats& s) override {
    overflows += s.overflow;
    last_scale = s.loss_scale;
  }
  int64_t overflows = 0;
  double last_scale = 1;
};

struct Result {
  double samples_per_s = 0, cpu_samples_per_s = 0, accuracy = 0, loss_scale = 1;
  int64_t overflows = 0;
};

Result trainOnce(const std::string& dtype, int seed, int epochs, int batch,
                 const Dataset& train_set, const Dataset& test_set) {
  const bool low_head = dtype.find("-lowhead") != std::string::npos;
  const JobSpec job = parseJob(
      "", "bench_amp",
      {"amp.dtype=" + dtype.substr(0, 4),
       std::string("amp.head_fp32=") + (low_head ? "false" : "true"),
       "train.epochs=" + std::to_string(epochs), "train.batch_size=" + std::to_string(batch),
       "train.seed=" + std::to_string(seed), "parallel.ranks=1"});
  ThreadRendezvous rendezvous(1);
  ThreadCommunicator comm(rendezvous, 0);
  AmpTotals totals;
  const double cpu_start = threadCpuSeconds();
  const TrainResult r = train(job, comm, train_set, test_set, totals);
  const double cpu = threadCpuSeconds() - cpu_start;
  const double samples = double(r.steps) * batch;
  return {samples / (r.train_ns / 1e9), samples / cpu, r.last_eval.test_accuracy, totals.last_scale,
          totals.overflows};
}

int run(int threads, int seeds, int epochs, int batch) {
  kernels::setBlasThreads(threads);
  const JobSpec defaults;
  const Dataset train_set = loadFashionMnist(defaults.data.path, "train", 0);
  const Dataset test_set = loadFashionMnist(defaults.data.path, "t10k", 0);
  // Labels are amp.dtype, with "-lowhead" for amp.head_fp32 = false.
  const std::vector<std::string> dtypes = {"fp32", "bf16", "fp16", "bf16-lowhead"};
  std::vector<Result> summary(dtypes.size());
  for (int seed = 1; seed <= seeds; ++seed) {
    for (size_t i = 0; i < dtypes.size(); ++i) {
      // Alternate the order, so a slow spell on a shared machine does not favour one side.
      const size_t d = seed % 2 == 1 ? i : dtypes.size() - 1 - i;
      const Result one = trainOnce(dtypes[d], seed, epochs, batch, train_set, test_set);
      std::fprintf(stderr,
                   "  %s seed %d: %.0f samples/s, %.0f per CPU second, accuracy %.4f, %lld "
                   "skipped\n",
                   dtypes[d].c_str(), seed, one.samples_per_s, one.cpu_samples_per_s, one.accuracy,
                   static_cast<long long>(one.overflows));
      Result& s = summary[d];
      s.samples_per_s = std::max(s.samples_per_s, one.samples_per_s);
      s.cpu_samples_per_s += one.cpu_samples_per_s / seeds;
      s.accuracy += one.accuracy / seeds;
      if (seed == 1) {
        s.loss_scale = one.loss_scale;
        s.overflows = one.overflows;
      }
    }
  }
  std::printf("1 rank, %d BLAS/oneDNN thread(s), batch %d, %d epochs, seeds 1..%d\n", threads,
              batch, epochs, seeds);
  std::printf("bf16 GEMM: %s\n", kernels::bf16GemmBackend().c_str());
  std::printf("%-13s %10s %8s %12s %8s %14s %10s %11s %8s\n", "amp", "samples/s", "speedup",
              "per CPU-s", "speedup", "mean accuracy", "vs fp32", "loss scale", "skipped");
  const Result& base = summary[0];
  for (size_t d = 0; d < dtypes.size(); ++d) {
    const Result& r = summary[d];
    std::printf("%-13s %10.0f %7.2fx %12.0f %7.2fx %14.4f %+10.4f %11.0f %8lld\n",
                dtypes[d].c_str(), r.samples_per_s, r.samples_per_s / base.samples_per_s,
                r.cpu_samples_per_s, r.cpu_samples_per_s / base.cpu_samples_per_s, r.accuracy,
                r.accuracy - base.accuracy, r.loss_scale, static_cast<long long>(r.overflows));
  }
  std::printf(
      "samples/s: wall clock of the training loop, best over the seeds; per CPU-s: training\n"
      "samples per CPU second of the training thread (evaluation included), mean over the\n"
      "seeds; loss scale and skipped: at the end of seed 1's run\n");
  return 0;
}

}  // namespace
}  // namespace ranklab

int main(int argc, char** argv) {
  int threads = 1, seeds = 3, epochs = 2, batch = 64;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::max(1, std::atoi(argv[i + 1]));
    if (flag == "--threads") {
      threads = value;
    } else if (flag == "--seeds") {
      seeds = value;
    } else if (flag == "--epochs") {
      epochs = value;
    } else if (flag == "--batch") {
      batch = value;
    } else {
      std::fprintf(stderr, "bench_amp: unknown option %s (--threads, --seeds, --epochs, --batch)\n",
                   flag.c_str());
      return 1;
    }
  }
  try {
    return ranklab::run(threads, seeds, epochs, batch);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_amp: %s\n", e.what());
    return 1;
  }
}
