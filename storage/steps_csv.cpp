#include "storage/steps_csv.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
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

std::runtime_error writeError(const std::string& path, const std::string& cause) {
  return std::runtime_error(path + ": cannot write the CSV export: " + cause);
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
  const std::string partial = path + ".part";
  std::ofstream out(partial, std::ios::binary | std::ios::trunc);
  if (!out) throw writeError(path, std::strerror(errno));
  int64_t rows = 0;
  try {
    rows = writeStepsCsv(store, run_id, out);
    out.close();
    if (!out) throw writeError(path, "write failed (disk full?)");
  } catch (...) {
    std::remove(partial.c_str());
    throw;
  }
  if (std::rename(partial.c_str(), path.c_str()) != 0) {
    const std::string cause = std::strerror(errno);
    std::remove(partial.c_str());
    throw writeError(path, cause);
  }
  return rows;
}

}  // namespace ranklab
