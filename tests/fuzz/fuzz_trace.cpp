// libFuzzer target: a PyTorch profiler trace's bytes, as `ranklab import` reads them, then
// cut into step rows and spans beside a second copy of itself (two ranks, clocks aligned),
// or, for ranklab's own export, read back as its run.
// Either rows or a std::runtime_error naming what is wrong; nothing else may happen.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "storage/trace_import/export_rows.h"
#include "storage/trace_import/pytorch_trace.h"
#include "storage/trace_import/trace_steps.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::FILE* file = fmemopen(const_cast<uint8_t*>(data), size, "rb");
  if (file == nullptr) return 0;
  try {
    ranklab::RankTrace trace = ranklab::readPytorchTrace(file, "fuzz.json");
    if (trace.isRanklabExport()) {  // ranklab's own export, read back
      (void)ranklab::exportedRun(trace);
      std::fclose(file);
      return 0;
    }
    std::vector<ranklab::RankTrace> traces{trace, trace};
    traces[1].rank = 1;
    ranklab::lendSizes(traces);
    const ranklab::ClockAlignment clocks = ranklab::alignClocks(traces);
    (void)ranklab::traceRows(traces, clocks);
  } catch (const std::runtime_error&) {
  }
  std::fclose(file);
  return 0;
}
