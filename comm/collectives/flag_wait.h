// Ranks that meet through shared memory without a barrier: each rank owns a cache line
// holding a counter it only raises; a peer waits until the counter reaches a value. The
// release store publishes every write the owner made before it (its slot's data); the
// acquire load makes them visible to the reader.
#pragma once

#include <sched.h>

#include <atomic>
#include <cstdint>
#include <ctime>

#include "comm/steady_clock.h"

namespace ranklab {

inline void raiseFlag(uint64_t* flag, uint64_t value) {
  std::atomic_ref<uint64_t>(*flag).store(value, std::memory_order_release);
}

inline uint64_t readFlag(uint64_t* flag) {
  return std::atomic_ref<uint64_t>(*flag).load(std::memory_order_acquire);
}

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Spins a moment (a peer on another core answers within it: 0.1-0.2 us on the EPYC VM),
// then yields the core at every look (ranks beyond the cores share them: spinning longer
// before yielding made 4 ranks on 2 cores 1.3-2x slower, bench/LOG.md), and after 1 ms
// sleeps between looks, so a rank waiting on a straggler does not keep a core busy.
inline void waitForFlag(uint64_t* flag, uint64_t at_least) {
  for (int i = 0; i < 64; ++i) {
    if (readFlag(flag) >= at_least) return;
    cpuRelax();
  }
  const int64_t start = steadyNowNs();
  while (readFlag(flag) < at_least) {
    if (steadyNowNs() - start < 1'000'000) {
      sched_yield();
    } else {
      const timespec nap{0, 20'000};
      nanosleep(&nap, nullptr);
    }
  }
}

}  // namespace ranklab
