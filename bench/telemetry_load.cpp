// Telemetry load: R simulated ranks, each a real Reporter (ZeroMQ PUSH, the workers' 20 ms
// step batching and spool) sending N step records a second for S seconds to one Collector
// whose RunRecorder writes them to a real SQLite run store, as `ranklab run` does. Prints
// the offered and stored rates, the records lost (sent - stored, the reporters' spool drops,
// the collector's sequence gaps) and how far the store fell behind. Goal (issue: fault
// tolerance): 64 ranks x 2,000 records/s for 30 s, zero loss.
// Usage: bench_telemetry_load [--ranks 64] [--rate 2000] [--seconds 30] [--threads 2]
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "comm/telemetry/collector.h"
#include "comm/telemetry/reporter.h"
#include "launch/run_recorder.h"
#include "storage/run_store.h"

using namespace ranklab;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  int ranks = 64, rate = 2000, seconds = 30, threads = 2;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if (flag == "--ranks")
      o.ranks = value;
    else if (flag == "--rate")
      o.rate = value;
    else if (flag == "--seconds")
      o.seconds = value;
    else if (flag == "--threads")
      o.threads = value;
    else {
      std::fprintf(stderr, "unknown option %s (--ranks, --rate, --seconds, --threads)\n", argv[i]);
      std::exit(2);
    }
  }
  return o;
}

telemetry::Step stepRecord(int rank, int64_t k) {
  telemetry::Step s;
  s.set_step(k);
  s.set_epoch(1);
  s.set_samples(64);
  auto* p = s.mutable_phases();
  p->set_forward_ns(1'000'000 + rank);
  p->set_backward_ns(2'000'000);
  p->set_comm_ns(500'000);
  s.set_loss(2.5 / double(k + 1));
  s.set_bytes_tx(1 << 20);
  return s;
}

// One producer thread paces its share of the ranks: every rank's k-th step at k / rate s.
void produce(const Options& o, const std::string& endpoint, int first, int last,
             std::atomic<uint64_t>& sent, std::atomic<uint64_t>& dropped) {
  std::vector<std::unique_ptr<Reporter>> reporters;
  for (int r = first; r < last; ++r) {
    ReporterOptions options;
    options.endpoint = endpoint;
    options.run_id = "load";
    options.rank = r;
    options.step_batch_ms = 20;
    options.close_timeout_ms = 10'000;
    reporters.push_back(std::make_unique<Reporter>(options));
    reporters.back()->hello(o.ranks, "load", getpid());
  }
  const int64_t total = int64_t{o.rate} * o.seconds;
  const auto start = Clock::now();
  for (int64_t k = 1; k <= total; ++k) {
    std::this_thread::sleep_until(start + std::chrono::nanoseconds(k * 1'000'000'000LL / o.rate));
    for (int r = first; r < last; ++r) reporters[size_t(r - first)]->step(stepRecord(r, k));
  }
  for (auto& reporter : reporters) {
    reporter->bye(0, 0, "");
    reporter->close();
    sent += reporter->sent();
    dropped += reporter->dropped();
  }
}

class Quiet : public RunObserver {};

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const std::string folder =
      std::filesystem::temp_directory_path() / ("ranklab-load-" + std::to_string(getpid()));
  std::filesystem::create_directories(folder);
  {
    RunStore store(folder + "/runs.db");
    const int64_t id = store.createRun(NewRun{"load", "", "", o.ranks, "", "", "", "", 1});
    Quiet quiet;
    RunRecorder recorder(store, id, o.ranks, quiet);
    Collector collector("load", o.ranks);

    std::atomic<uint64_t> sent{0}, dropped{0};
    std::vector<std::thread> producers;
    for (int t = 0; t < o.threads; ++t)
      producers.emplace_back(produce, std::cref(o), collector.endpoint(), t * o.ranks / o.threads,
                             (t + 1) * o.ranks / o.threads, std::ref(sent), std::ref(dropped));
    const auto start = Clock::now();
    const auto deadline = start + std::chrono::seconds(o.seconds + 60);
    while (!recorder.allRanksSaidBye() && Clock::now() < deadline) {
      for (const auto& e : collector.receive(50)) recorder.ingest(e);
      recorder.flushIfDue();
    }
    const double drained_s = std::chrono::duration<double>(Clock::now() - start).count();
    for (auto& p : producers) p.join();
    for (const auto& e : collector.receive(200)) recorder.ingest(e);
    recorder.flush();
    int64_t gaps = 0;
    for (int r = 0; r < o.ranks; ++r) gaps += collector.gaps(r);
    const int64_t offered = int64_t{o.ranks} * o.rate * o.seconds;
    const int64_t stored = static_cast<int64_t>(store.steps(id).size());
    std::printf(
        "%d ranks x %d records/s x %d s = %lld step records (%.0f/s offered)\n"
        "stored %lld (%.0f/s over %.1f s until the last Bye was in): lost %lld; reporters "
        "dropped %llu from full spools; collector saw %lld sequence gaps; load %.1f\n",
        o.ranks, o.rate, o.seconds, static_cast<long long>(offered), double(offered) / o.seconds,
        static_cast<long long>(stored), double(stored) / drained_s, drained_s,
        static_cast<long long>(offered - stored), static_cast<unsigned long long>(dropped.load()),
        static_cast<long long>(gaps), [] {
          double load = 0;
          return getloadavg(&load, 1) == 1 ? load : 0.0;
        }());
    (void)sent;
  }
  std::filesystem::remove_all(folder);
  return 0;
}
