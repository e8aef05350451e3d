// libFuzzer target: a PyTorch profiler trace's bytes, as `ranklab import` reads them, then
// cut into step rows and spans beside a second copy of itself (two ranks, clocks aligned),
// or, for ranklab's own export, read back as its run.
// Either rows or a std::runtime_error naming what is wrong; nothing else may happen.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "storage/trace_import/export_rows.h"
#include "storage/trace_import/pytorch_trace.h"
#include "storage/trace_import/run_rows.h"
#include "storage/trace_import/trace_steps.h"

namespace {

// The rows' way to the store without a store: each only made.
struct DroppedRows : ranklab::RunRowSink {
  void add(ranklab::RankRow) override {}
  void add(ranklab::StepRow) override {}
  void add(ranklab::SpanRow) override {}
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::FILE* file = fmemopen(const_cast<uint8_t*>(data), size, "rb");
  if (file == nullptr) return 0;
  try {
    ranklab::RankTrace trace = ranklab::readPytorchTrace(file, "fuzz.json");
    if (trace.isRanklabExport()) {  // ranklab's own export, read back
      (void)ranklab::exportedRun(trace.path, trace.other_data, trace.export_rows);
      std::fclose(file);
      return 0;
    }
    std::vector<ranklab::RankTrace> traces{trace, trace};
    traces[1].rank = 1;
    ranklab::lendSizes(traces);
    const ranklab::ClockAlignment clocks = ranklab::alignClocks(traces);
    DroppedRows dropped;
    ranklab::ImportedRunRows rows(dropped, [](int) { return std::string("fuzz.json"); });
    (void)ranklab::traceRows(traces, {0, 1}, clocks, rows);
  } catch (const std::runtime_error&) {
  }
  std::fclose(file);
  return 0;
}
