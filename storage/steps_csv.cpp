#include "storage/steps_csv.h"

#include "storage/atomic_file.h"

#include <cstdio>
#include <stdexcept>

namespace ranklab {

namespace {

// A double as text that reads back to the same value; integers and flags as numbers.
std::string cell(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}
std::string cell(int64_t v) {
  return std::to_string(v);
}
std::string cell(bool v) {
  return v ? "1" : "0";
}

}  // namespace

const std::string& stepsCsvHeader() {
  static const std::string header = joinedStepColumns(",");
  return header;
}

int64_t writeStepsCsv(RunStore& store, int64_t run_id, std::ostream& out) {
  if (!store.run(run_id))
    throw std::runtime_error(store.path() + ": no run with id " + std::to_string(run_id));
  out << stepsCsvHeader() << '\n';
  int64_t rows = 0;
  store.forEachStep(run_id, [&](const StepRow& s) {
    out << s.run_id << ',' << s.rank << ',' << s.step << ',' << s.epoch << ',' << s.samples;
#define RANKLAB_PHASE_CELL(name, kind) out << ',' << s.name##_ns;
    RANKLAB_STEP_PHASES(RANKLAB_PHASE_CELL)
#undef RANKLAB_PHASE_CELL
    out << ',' << s.comm_hidden_ns;
#define RANKLAB_MEASURE_CELL(type, name, init) out << ',' << cell(s.name);
    RANKLAB_STEP_MEASURES(RANKLAB_MEASURE_CELL)
#undef RANKLAB_MEASURE_CELL
    out << ',' << s.time_ns << '\n';
    ++rows;
  });
  return rows;
}

int64_t exportStepsCsv(RunStore& store, int64_t run_id, const std::string& path) {
  return writeFileWhole(path, "the CSV export",
                        [&](std::ostream& out) { return writeStepsCsv(store, run_id, out); });
}

}  // namespace ranklab
