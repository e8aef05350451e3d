// bench_codecs: every gradient codec on the quickstart job (784-256-128-10 MLP,
// Fashion-MNIST, batch 64 per rank, SGD lr 0.05 momentum 0.9, ring all-reduce), trained
// one after another in the same MPI job, and one table: bytes per step, compression ratio,
// encode+decode time, final test accuracy, samples/s. With --strategy ps-sync or ps-async
// the last rank is a parameter server and the others are workers (mpirun -np 5 for 4
// workers): the table then has the pulls' bytes and ratio too (powersgd is skipped, the
// parameter server refuses it).
// Usage: mpirun -np 4 bench_codecs [--epochs E] [--only label,label] [--json]
//        mpirun -np 5 bench_codecs --strategy ps-sync|ps-async [...]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "comm/mpi/mpi_communicator.h"
#include "engine/data/idx_dataset.h"
#include "engine/job/job_file.h"
#include "engine/job/job_spec.h"
#include "engine/train/ps_server.h"
#include "engine/train/trainer.h"
#include "kernels/cpu/gemm.h"

namespace ranklab {
namespace {

struct Variant {
  std::string label;
  JobOverrides overrides;  // --set style, on top of the quickstart job
};

// The codecs with the settings the comparison uses; error feedback and momentum correction
// (the job file's defaults) are on unless the label says otherwise.
std::vector<Variant> variants() {
  return {
      {"none", {}},
      {"fp16", {"compression.codec=fp16"}},
      {"bf16", {"compression.codec=bf16"}},
      {"qsgd-8bit", {"compression.codec=qsgd", "compression.bits=8"}},
      {"qsgd-4bit", {"compression.codec=qsgd", "compression.bits=4"}},
      {"qsgd-2bit", {"compression.codec=qsgd", "compression.bits=2"}},
      {"qsgd-2bit-nomc",
       {"compression.codec=qsgd", "compression.bits=2", "compression.momentum_correction=false"}},
      {"topk-1%", {"compression.codec=topk", "compression.ratio=0.01"}},
      {"topk-1%-nomc",
       {"compression.codec=topk", "compression.ratio=0.01",
        "compression.momentum_correction=false"}},
      {"topk-1%-f16v",
       {"compression.codec=topk", "compression.ratio=0.01", "compression.value_dtype=fp16"}},
      {"topk-0.5%-f16v",
       {"compression.codec=topk", "compression.ratio=0.005", "compression.value_dtype=fp16"}},
      {"randomk-10%", {"compression.codec=randomk", "compression.ratio=0.1"}},
      {"threshold", {"compression.codec=threshold"}},
      {"sign", {"compression.codec=sign"}},
      {"sign-no-ef", {"compression.codec=sign", "compression.error_feedback=false"}},
      {"sign-no-ef-nomc",
       {"compression.codec=sign", "compression.error_feedback=false",
        "compression.momentum_correction=false"}},
      {"powersgd-r1", {"compression.codec=powersgd", "compression.rank=1"}},
      {"powersgd-r2", {"compression.codec=powersgd", "compression.rank=2"}},
      {"powersgd-r4", {"compression.codec=powersgd", "compression.rank=4"}},
  };
}

// Sums what each step (a worker) or each load report (a server) says on this rank.
class Totals : public TrainObserver {
 public:
  void onStep(const StepStats& s) override {
    ++steps;
    bytes_tx += s.bytes_tx;
    bytes_rx += s.bytes_rx;
    bytes_raw += s.bytes_raw;
    compress_ns += s.compress_ns;
  }
  void onServerLoad(const ServerLoad& l) override {
    server_tx += l.bytes_tx;
    server_raw += l.bytes_raw;
  }
  int64_t steps = 0, bytes_tx = 0, bytes_rx = 0, bytes_raw = 0, compress_ns = 0;
  int64_t server_tx = 0, server_raw = 0;
};

struct Row {
  std::string label;
  double bytes_per_step = 0, raw_per_step = 0, codec_ms = 0, accuracy = 0, samples_per_s = 0;
  double pull_bytes_per_step = 0, pull_ratio = 0;  // parameter server only
};

// The parallel section for `strategy` on a world of `world` ranks: one server under ps-*.
JobOverrides strategyOverrides(const std::string& strategy, int world) {
  if (strategy == "allreduce") return {};
  return {"parallel.strategy=" + strategy, "parallel.servers=1",
          "parallel.ranks=" + std::to_string(world - 1)};
}

// Every rank's value, in rank order (an all-reduce of one-hot vectors).
std::vector<double> gather(Communicator& comm, double value) {
  std::vector<float> slots(comm.size(), 0.f);
  slots[comm.rank()] = static_cast<float>(value);
  comm.allreduceSumNative(slots.data(), slots.size());
  return {slots.begin(), slots.end()};
}

double sum(const std::vector<double>& values) {
  double total = 0;
  for (double v : values) total += v;
  return total;
}

Row runVariant(const Variant& v, const std::string& strategy, int epochs, Communicator& comm,
               const Dataset& train_set, const Dataset& test_set) {
  JobOverrides overrides = strategyOverrides(strategy, comm.size());
  overrides.insert(overrides.end(), v.overrides.begin(), v.overrides.end());
  overrides.push_back("train.epochs=" + std::to_string(epochs));
  const JobSpec job = parseJob("", "bench_codecs", overrides);
  Totals totals;
  TrainResult result;
  if (isServerRank(job, comm.rank())) {
    serveParameters(job, comm, totals);
  } else {
    result = train(job, comm, train_set, test_set, totals);
  }
  // Rank 0 is a worker; servers report 0 steps and stay out of the maxima.
  const int64_t steps = std::max<int64_t>(totals.steps, 1);
  const auto train_s = gather(comm, result.train_ns / 1e9);
  const auto codec_ms = gather(comm, totals.compress_ns / 1e6 / steps);
  const auto server_tx = gather(comm, double(totals.server_tx));
  const auto server_raw = gather(comm, double(totals.server_raw));
  Row row;
  row.label = v.label;
  row.bytes_per_step = double(totals.bytes_tx) / steps;
  row.raw_per_step = double(totals.bytes_raw) / steps;
  row.codec_ms = *std::max_element(codec_ms.begin(), codec_ms.end());
  row.accuracy = result.last_eval.test_accuracy;
  const double slowest = *std::max_element(train_s.begin(), train_s.end());
  row.samples_per_s = double(totals.steps) * job.train.batch_size * job.parallel.ranks / slowest;
  if (usesParameterServer(job)) {
    row.pull_bytes_per_step = double(totals.bytes_rx) / steps;
    row.pull_ratio = sum(server_tx) > 0 ? sum(server_raw) / sum(server_tx) : 0;
  }
  return row;
}

void printJson(const std::vector<Row>& rows, const std::string& strategy, int world, int epochs) {
  const Row& base = rows.front();
  for (const auto& r : rows) {
    std::printf(
        "{\"codec\":\"%s\",\"strategy\":\"%s\",\"world\":%d,\"epochs\":%d,"
        "\"bytes_per_step\":%.0f,\"ratio\":%.2f,\"pull_bytes_per_step\":%.0f,"
        "\"pull_ratio\":%.2f,\"codec_ms_per_step\":%.3f,\"test_accuracy\":%.4f,"
        "\"samples_per_s\":%.0f}\n",
        r.label.c_str(), strategy.c_str(), world, epochs, r.bytes_per_step,
        r.bytes_per_step > 0 ? base.bytes_per_step / r.bytes_per_step : 0.0, r.pull_bytes_per_step,
        r.pull_ratio, r.codec_ms, r.accuracy, r.samples_per_s);
  }
}

void print(const std::vector<Row>& rows, const std::string& strategy, int world, int epochs) {
  const Row& base = rows.front();
  const bool ps = strategy != "allreduce";
  if (ps) {
    std::printf("%d workers + 1 server, %s, quickstart MLP, %d epochs, batch 64 per worker\n",
                world - 1, strategy.c_str(), epochs);
  } else {
    std::printf("%d ranks, ring all-reduce, quickstart MLP, %d epochs, batch 64 per rank\n", world,
                epochs);
  }
  std::printf("%-16s %13s %8s", "codec", ps ? "push B/step" : "bytes/step", "ratio");
  if (ps) std::printf(" %13s %8s", "pull B/step", "ratio");
  std::printf(" %15s %10s %10s %10s\n", "enc+dec ms/step", "accuracy", "vs none", "samples/s");
  for (const auto& r : rows) {
    const double ratio = r.bytes_per_step > 0 ? base.bytes_per_step / r.bytes_per_step : 0.0;
    std::printf("%-16s %13.0f %7.1fx", r.label.c_str(), r.bytes_per_step, ratio);
    if (ps) std::printf(" %13.0f %7.1fx", r.pull_bytes_per_step, r.pull_ratio);
    std::printf(" %15.3f %10.4f %+10.4f %10.0f\n", r.codec_ms, r.accuracy,
                r.accuracy - base.accuracy, r.samples_per_s);
  }
  std::printf(
      "%s: sent by one rank per step (rank 0); ratio: uncompressed bytes/step over this "
      "row's;\n",
      ps ? "push B/step" : "bytes/step");
  if (ps) {
    std::printf(
        "pull B/step: received by worker 0 per step; its ratio: the servers' replies "
        "uncompressed over sent;\n");
  }
  std::printf(
      "enc+dec: encode, decode and error feedback per step (slowest worker); samples/s: all "
      "training ranks' samples over the slowest rank's training time\n");
}

int run(int argc, char** argv) {
  MpiCommunicator comm;
  int epochs = 2;
  bool json = false;
  std::string strategy = "allreduce";
  std::vector<std::string> only;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--json") {
      json = true;
    } else if (flag == "--strategy" && i + 1 < argc) {
      strategy = argv[++i];
      if (strategy != "allreduce" && strategy != "ps-sync" && strategy != "ps-async") {
        throw std::invalid_argument("bench_codecs: --strategy " + strategy +
                                    " (allowed: allreduce, ps-sync, ps-async)");
      }
    } else if (flag == "--epochs" && i + 1 < argc) {
      epochs = std::stoi(argv[++i]);
    } else if (flag == "--only" && i + 1 < argc) {
      std::stringstream list(argv[++i]);
      for (std::string label; std::getline(list, label, ',');) only.push_back(label);
    } else {
      throw std::invalid_argument("bench_codecs: unknown option " + flag +
                                  " (allowed: --epochs E, --only a,b, --strategy S, --json)");
    }
  }
  const JobSpec defaults;
  kernels::setBlasThreads(1);
  const Dataset train_set = loadFashionMnist(defaults.data.path, "train", 0);
  const Dataset test_set = loadFashionMnist(defaults.data.path, "t10k", 0);
  std::vector<Row> rows;
  if (strategy != "allreduce" && comm.size() < 2) {
    throw std::invalid_argument("bench_codecs: --strategy " + strategy +
                                " needs at least 2 ranks (workers + 1 server)");
  }
  for (const auto& v : variants()) {
    // The baseline always runs: ratios and accuracy differences are relative to it.
    if (!only.empty() && v.label != "none" &&
        std::find(only.begin(), only.end(), v.label) == only.end()) {
      continue;
    }
    if (strategy != "allreduce" && v.label.rfind("powersgd", 0) == 0) continue;
    rows.push_back(runVariant(v, strategy, epochs, comm, train_set, test_set));
    if (comm.rank() == 0 && !json) {
      std::fprintf(stderr, "  %s: accuracy %.4f\n", rows.back().label.c_str(),
                   rows.back().accuracy);
    }
  }
  if (comm.rank() == 0) {
    if (json) {
      printJson(rows, strategy, comm.size(), epochs);
    } else {
      print(rows, strategy, comm.size(), epochs);
    }
  }
  return 0;
}

}  // namespace
}  // namespace ranklab

int main(int argc, char** argv) {
  ranklab::MpiSession mpi(&argc, &argv);
  try {
    return ranklab::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_codecs: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
  }
}
