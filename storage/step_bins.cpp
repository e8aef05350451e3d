// Step bins: each rank's steps summed in ~1,000 bins when a run ends, so the workbench opens
// a run of a million steps from ~16,000 rows. SQLite does the summing, in C, once.
#include <bit>
#include <string>

#include "storage/run_store.h"
#include "storage/statement.h"

namespace ranklab {
namespace {

using sqlite::Query;
using sqlite::Statement;

// Most steps any rank of the run spans (first to last step).
constexpr const char* kLongestRankSpan = R"sql(
SELECT COALESCE(MAX(last - first + 1), 0)
FROM (SELECT MIN(step) AS first, MAX(step) AS last FROM steps WHERE run_id = ?1 GROUP BY rank))sql";

// The phase columns, "data_ns, forward_ns, …", each wrapped as `pattern` says ("%" = column).
std::string phaseColumns(const std::string& pattern) {
  std::string out;
#define RANKLAB_PHASE_COLUMN(name, kind) \
  out +=                                 \
      (out.empty() ? "" : ", ") + std::string(pattern).replace(pattern.find('%'), 1, #name "_ns");
  RANKLAB_STEP_PHASES(RANKLAB_PHASE_COLUMN)
#undef RANKLAB_PHASE_COLUMN
  return out;
}

// ?1 run, ?2 bin width. Non-finite losses (inf, and NaN: 0 with loss_nan set) stay out of
// the loss columns, as they stay out of the curves.
std::string insertBinsSql() {
  return "INSERT INTO step_bins (run_id, rank, first_step, last_step, steps, epoch, samples, " +
         phaseColumns("%") +
         R"sql(, loss_sum, loss_count, loss_min, loss_max, bytes_tx, bytes_rx, loss_scale_min,
  loss_scale_max, staleness_sum, first_time_ns, last_time_ns, bytes_raw)
SELECT run_id, rank, MIN(step), MAX(step), COUNT(*), MAX(epoch), SUM(samples), )sql" +
         phaseColumns("SUM(%)") +
         R"sql(, TOTAL(finite), COUNT(finite), MIN(finite), MAX(finite), SUM(bytes_tx),
       SUM(bytes_rx), MIN(loss_scale), MAX(loss_scale), SUM(staleness), MIN(time_ns),
       MAX(time_ns), SUM(bytes_raw)
FROM (SELECT *, CASE WHEN loss_nan = 0 AND
                          loss BETWEEN -1.7976931348623157e308 AND 1.7976931348623157e308
                     THEN loss END AS finite
      FROM steps WHERE run_id = ?1)
GROUP BY rank, step / ?2)sql";
}

std::string selectBinsSql() {
  return "SELECT rank, first_step, last_step, steps, epoch, samples, " + phaseColumns("%") +
         R"sql(, loss_sum, loss_count, COALESCE(loss_min, 0), COALESCE(loss_max, 0), bytes_tx,
       bytes_rx, loss_scale_min, loss_scale_max, staleness_sum, first_time_ns, last_time_ns,
       bytes_raw
FROM step_bins WHERE run_id = ? ORDER BY rank, first_step)sql";
}

StepBin readBin(Query& q) {
  StepBin b;
  b.rank = q.integer();
  b.first_step = q.int64();
  b.last_step = q.int64();
  b.steps = q.int64();
  b.epoch = q.integer();
  b.samples = q.int64();
#define RANKLAB_READ_PHASE(name, kind) b.name##_ns = q.int64();
  RANKLAB_STEP_PHASES(RANKLAB_READ_PHASE)
#undef RANKLAB_READ_PHASE
  b.loss_sum = q.real();
  b.loss_count = q.int64();
  b.loss_min = q.real();
  b.loss_max = q.real();
  b.bytes_tx = q.int64();
  b.bytes_rx = q.int64();
  b.loss_scale_min = q.real();
  b.loss_scale_max = q.real();
  b.staleness_sum = q.int64();
  b.first_time_ns = q.int64();
  b.last_time_ns = q.int64();
  b.bytes_raw = q.int64();
  return b;
}

}  // namespace

int64_t RunStore::stepBinWidth(int64_t steps) {
  if (steps <= kStepBinsPerRank) return 1;
  return int64_t(std::bit_ceil(uint64_t((steps + kStepBinsPerRank - 1) / kStepBinsPerRank)));
}

void RunStore::writeStepBins(int64_t run_id) {
  Statement clear(db_, path_, "clear step bins", "DELETE FROM step_bins WHERE run_id = ?");
  Query(clear).bind(run_id).run();
  Statement span(db_, path_, "measure the steps of each rank", kLongestRankSpan);
  int64_t longest = 0;
  {
    Query q(span);
    q.bind(run_id);
    if (q.next()) longest = q.int64();
  }
  if (longest == 0) return;  // no steps
  Statement insert(db_, path_, "sum steps into bins", insertBinsSql().c_str());
  Query(insert).bind(run_id, stepBinWidth(longest)).run();
}

void RunStore::summariseSteps(int64_t run_id) {
  requireWritable("sum its steps into bins");
  sqlite::Transaction transaction(db_, path_, "summarise steps");
  writeStepBins(run_id);
  transaction.commit();
}

std::vector<StepBin> RunStore::stepBins(int64_t run_id) {
  Statement statement(db_, path_, "read step bins", selectBinsSql().c_str());
  std::vector<StepBin> bins;
  Query q(statement);
  q.bind(run_id);
  while (q.next()) bins.push_back(readBin(q));
  return bins;
}

}  // namespace ranklab
