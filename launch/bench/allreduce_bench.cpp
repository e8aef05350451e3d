#include "launch/bench/allreduce_bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>

#include "comm/collectives/allreduce_registry.h"
#include "comm/collectives/flag_wait.h"
#include "comm/steady_clock.h"

namespace ranklab {

namespace {

double nowSeconds() {
  return double(steadyNowNs()) * 1e-9;
}

// The largest value over ranks, through the backend's own sum: each rank fills its slot.
double maxOverRanks(Communicator& comm, double value) {
  std::vector<float> slots(comm.size(), 0.f);
  slots[comm.rank()] = static_cast<float>(value);
  comm.allreduceSumNative(slots.data(), slots.size());
  return *std::max_element(slots.begin(), slots.end());
}

// Rank r puts (r + 1) * (i % 13 + 1) at i; the sum n(n+1)/2 * (i % 13 + 1) is exact.
void fillForCheck(std::vector<float>& data, int rank) {
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = static_cast<float>((rank + 1) * static_cast<int>(i % 13 + 1));
}

double largestError(const std::vector<float>& data, int world) {
  double worst = 0;
  const double ranks_sum = world * (world + 1) / 2.0;
  for (size_t i = 0; i < data.size(); ++i) {
    worst = std::max(worst, std::abs(data[i] - ranks_sum * static_cast<double>(i % 13 + 1)));
  }
  return worst;
}

// Timed batch length: enough all-reduces to last about `seconds` on a first estimate.
int iterationsFor(Communicator& comm, Allreduce& reduce, std::vector<float>& data, double seconds) {
  const double start = nowSeconds();
  reduce.run(data.data(), data.size());
  const double one = maxOverRanks(comm, nowSeconds() - start);
  return std::clamp(static_cast<int>(seconds / std::max(one, 1e-7)), 3, 2000);
}

// The machine's own floor for any exchange: ranks 0 and 1 bounce one cache line through
// shared memory, each raising its counter when it sees the other's (the others wait), best
// of 5 batches of 2,000 round trips; half the round trip, 0 where the ranks share no memory.
double pingPongSeconds(Communicator& comm) {
  auto slots = comm.allocateSharedSlots(16);
  if (!slots || comm.size() < 2) return 0;
  auto counter = [&](int rank) { return reinterpret_cast<uint64_t*>(slots->slot(rank)); };
  raiseFlag(counter(comm.rank()), 0);
  slots->fence();
  constexpr int kRounds = 2000;
  const int me = comm.rank(), other = 1 - me;
  double best = 1e30;
  for (int batch = 0; batch < 5 && me < 2; ++batch) {
    const double start = nowSeconds();
    for (uint64_t i = batch * kRounds + 1; i <= uint64_t(batch + 1) * kRounds; ++i) {
      if (me == 1) waitForFlag(counter(other), i);
      raiseFlag(counter(me), i);
      if (me == 0) waitForFlag(counter(other), i);
    }
    best = std::min(best, (nowSeconds() - start) / kRounds / 2);
  }
  slots->fence();
  return maxOverRanks(comm, me == 0 ? best : 0);
}

}  // namespace

std::vector<AllreduceBenchRow> runAllreduceBench(Communicator& comm,
                                                 const AllreduceBenchOptions& options) {
  const int n = comm.size();
  std::vector<std::unique_ptr<Allreduce>> reduces;
  for (const auto& algorithm : options.algorithms)
    reduces.push_back(makeAllreduce(algorithm, comm, {options.ranks_per_host}));
  const size_t kinds = reduces.size();
  const double floor = pingPongSeconds(comm);
  std::vector<AllreduceBenchRow> rows;
  for (size_t bytes = options.min_bytes; bytes <= options.max_bytes; bytes *= 2) {
    std::vector<float> data(bytes / sizeof(float), 0.f);
    std::vector<int> iterations(kinds);
    std::vector<double> best(kinds, 1e30);
    for (size_t a = 0; a < kinds; ++a) {
      // Warm-up: connections, page faults, caches.
      for (int i = 0; i < 2; ++i) reduces[a]->run(data.data(), data.size());
      iterations[a] = iterationsFor(comm, *reduces[a], data, options.seconds_per_size);
    }
    for (int repeat = 0; repeat < options.repeats; ++repeat) {
      for (size_t turn = 0; turn < kinds; ++turn) {
        const size_t a = (turn + repeat) % kinds;  // rotate who goes first
        comm.barrier();
        const double start = nowSeconds();
        for (int i = 0; i < iterations[a]; ++i) reduces[a]->run(data.data(), data.size());
        best[a] = std::min(best[a], maxOverRanks(comm, (nowSeconds() - start) / iterations[a]));
      }
    }
    for (size_t a = 0; a < kinds; ++a) {
      fillForCheck(data, comm.rank());
      reduces[a]->run(data.data(), data.size());
      AllreduceBenchRow row;
      row.algorithm = options.algorithms[a];
      row.world = n;
      row.bytes = data.size() * sizeof(float);
      row.iterations = iterations[a];
      row.seconds = best[a];
      row.algbw_gbs = row.seconds > 0 ? row.bytes / row.seconds / 1e9 : 0;
      row.busbw_gbs = row.algbw_gbs * 2.0 * (n - 1) / n;
      row.max_error = maxOverRanks(comm, largestError(data, n));
      row.verified = row.max_error == 0;
      row.path = reduces[a]->pathFor(data.size());
      row.floor_seconds = floor;
      rows.push_back(row);
    }
    if (bytes == 0) break;
  }
  return rows;
}

std::string benchRowJson(const AllreduceBenchRow& row) {
  char text[512];
  std::snprintf(text, sizeof text,
                "{\"algorithm\":\"%s\",\"world\":%d,\"bytes\":%zu,\"iterations\":%d,"
                "\"seconds\":%.9g,\"algbw_gbs\":%.6g,\"busbw_gbs\":%.6g,\"verified\":%s,"
                "\"max_error\":%.6g,\"path\":\"%s\",\"floor_seconds\":%.9g}",
                row.algorithm.c_str(), row.world, row.bytes, row.iterations, row.seconds,
                row.algbw_gbs, row.busbw_gbs, row.verified ? "true" : "false", row.max_error,
                row.path.c_str(), row.floor_seconds);
  return text;
}

}  // namespace ranklab
