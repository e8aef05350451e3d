// Telemetry load: R simulated ranks, each a real Reporter (ZeroMQ PUSH, the workers' 20 ms
// step batching and spool) sending N step records a second for S seconds to one Collector
// whose RunRecorder writes them to a real SQLite run store, as `ranklab run` does. Prints
// the offered and stored rates, the records lost (sent - stored, the reporters' spool drops,
// the collector's sequence gaps) and how far the store fell behind. Goal (issue: fault
// tolerance): 64 ranks x 2,000 records/s for 30 s, zero loss.
// --consume N: the launcher side takes at most N step records a second (a store that cannot
// keep up; e.g. a tenth of what is offered). Goals then: no rank's step() call blocks (the
// longest is printed), and every loss is counted (a rank missing steps has sequence gaps, or
// spooled messages it could not send before it closed); none silent.
// Usage: bench_telemetry_load [--ranks 64] [--rate 2000] [--seconds 30] [--threads 2]
//                             [--consume N]
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
  int consume = 0;  // records/s the launcher side takes at most; 0: as many as it can
};

// What the simulated ranks saw, summed over the producer threads.
struct Produced {
  explicit Produced(int ranks) : left_at_close(size_t(ranks)) {}
  std::atomic<uint64_t> sent{0}, dropped{0};
  std::vector<uint64_t> left_at_close;  // per rank: spooled messages it could not send
  std::atomic<int64_t> longest_step_ns{0};
  std::atomic<uint64_t> steps_over_1ms{0};
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
    else if (flag == "--consume")
      o.consume = value;
    else {
      std::fprintf(stderr, "unknown option %s (--ranks, --rate, --seconds, --threads, --consume)\n",
                   argv[i]);
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
void produce(const Options& o, const std::string& endpoint, int first, int last, Produced& out) {
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
    for (int r = first; r < last; ++r) {
      const telemetry::Step record = stepRecord(r, k);
      const auto before = Clock::now();  // what a training thread pays to report a step
      reporters[size_t(r - first)]->step(record);
      const int64_t ns = (Clock::now() - before).count();
      if (ns > 1'000'000) ++out.steps_over_1ms;
      for (int64_t seen = out.longest_step_ns; ns > seen;)
        if (out.longest_step_ns.compare_exchange_weak(seen, ns)) break;
    }
  }
  for (int r = first; r < last; ++r) {  // each thread writes only its own ranks' entries
    Reporter* reporter = reporters[size_t(r - first)].get();
    reporter->bye(0, 0, "");
    out.left_at_close[size_t(r)] = reporter->close();
    out.sent += reporter->sent();
    out.dropped += reporter->dropped();
  }
}

// Sleeps while more than `per_s` records a second have been taken since `start`.
void pace(int per_s, int64_t taken, Clock::time_point start) {
  if (per_s <= 0) return;
  std::this_thread::sleep_until(start + std::chrono::nanoseconds(taken * 1'000'000'000LL / per_s));
}

// Ranks whose stored steps miss some of 1..total with no loss counted for them: no
// sequence gap seen, no message left unsent at close. Goal: none.
int silentLosses(RunStore& store, int64_t run_id, const Options& o, const Collector& collector,
                 const Produced& produced) {
  int silent = 0;
  for (int r = 0; r < o.ranks; ++r) {
    const bool missing =
        int64_t(store.stepsOfRankFrom(run_id, r, 0).size()) < int64_t{o.rate} * o.seconds;
    if (missing && collector.gaps(r) == 0 && produced.left_at_close[size_t(r)] == 0) ++silent;
  }
  return silent;
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

    Produced produced(o.ranks);
    std::vector<std::thread> producers;
    for (int t = 0; t < o.threads; ++t)
      producers.emplace_back(produce, std::cref(o), collector.endpoint(), t * o.ranks / o.threads,
                             (t + 1) * o.ranks / o.threads, std::ref(produced));
    const auto start = Clock::now();
    const auto deadline =
        start + std::chrono::seconds(o.seconds + 60) +
        std::chrono::seconds(o.consume > 0 ? int64_t{o.ranks} * o.rate * o.seconds / o.consume : 0);
    // As the launcher does: on until every Bye is in, or nothing has come for a second.
    auto last_heard = Clock::now();
    while (!recorder.allRanksSaidBye() && Clock::now() < deadline &&
           Clock::now() - last_heard < std::chrono::seconds(1)) {
      const auto envelopes = collector.receive(50, o.consume > 0 ? 64 : 4096);
      if (!envelopes.empty()) last_heard = Clock::now();
      for (const auto& e : envelopes) recorder.ingest(e);
      recorder.flushIfDue();
      pace(o.consume, recorder.stepsReceived(), start);
    }
    const double drained_s = std::chrono::duration<double>(Clock::now() - start).count();
    for (auto& p : producers) p.join();
    for (const auto& e : collector.receive(200)) recorder.ingest(e);
    recorder.flush();
    int64_t gaps = 0, ranks_with_gaps = 0;
    for (int r = 0; r < o.ranks; ++r) {
      gaps += collector.gaps(r);
      ranks_with_gaps += collector.gaps(r) > 0;
    }
    const int64_t offered = int64_t{o.ranks} * o.rate * o.seconds;
    const int64_t stored = static_cast<int64_t>(store.steps(id).size());
    std::printf(
        "%d ranks x %d records/s x %d s = %lld step records (%.0f/s offered)\n"
        "stored %lld (%.0f/s over %.1f s until the last Bye was in): lost %lld; reporters "
        "dropped %llu from full spools; collector saw %lld sequence gaps; load %.1f\n",
        o.ranks, o.rate, o.seconds, static_cast<long long>(offered), double(offered) / o.seconds,
        static_cast<long long>(stored), double(stored) / drained_s, drained_s,
        static_cast<long long>(offered - stored),
        static_cast<unsigned long long>(produced.dropped.load()), static_cast<long long>(gaps), [] {
          double load = 0;
          return getloadavg(&load, 1) == 1 ? load : 0.0;
        }());
    std::printf(
        "ranks' step() calls: longest %.3f ms, %llu over 1 ms (goal: none blocks); ranks with "
        "counted gaps %lld of %d\n",
        double(produced.longest_step_ns.load()) / 1e6,
        static_cast<unsigned long long>(produced.steps_over_1ms.load()),
        static_cast<long long>(ranks_with_gaps), o.ranks);
    uint64_t left = 0;
    for (uint64_t n : produced.left_at_close) left += n;
    std::printf("messages left unsent at close %llu; ranks that lost steps silently %d (goal 0)\n",
                static_cast<unsigned long long>(left),
                silentLosses(store, id, o, collector, produced));
    if (o.consume > 0)
      std::printf("launcher side limited to %d records/s: %.1fx less than offered\n", o.consume,
                  double(offered) / o.seconds / o.consume);
  }
  std::filesystem::remove_all(folder);
  return 0;
}
