// Step bins: each rank's steps summed in ~1,000 bins when a run ends (fewer, down to 64, so
// that a run holds ~128,000 in all), so the workbench opens a run of a million steps from
// ~16,000 rows, and one of 1,024 ranks from 128,000. SQLite does the summing, in C, once.
#include <algorithm>
#include <bit>
#include <string>

#include "storage/rank_totals.h"
#include "storage/run_store.h"
#include "storage/statement.h"
#include "storage/store_rows.h"

namespace ranklab {
namespace {

using sqlite::Query;
using sqlite::Statement;
using namespace store_rows;  // NOLINT: the rows' readers

// Most steps any rank of the run spans (first to last step), and the ranks that stepped.
constexpr const char* kLongestRankSpan = R"sql(
SELECT COALESCE(MAX(last - first + 1), 0), COUNT(*)
FROM (SELECT MIN(step) AS first, MAX(step) AS last FROM steps WHERE run_id = ?1 GROUP BY rank))sql";

// ?1 run, ?2 bin width: each bin's sums as its list says (storage/record_fields.h), then
// each phase's. Non-finite losses (inf, and NaN: 0 with loss_nan set) stay out of the loss
// columns, as they stay out of the curves.
std::string insertBinsSql() {
  std::string sums;
#define RANKLAB_BIN_SUM(type, name, sum, init) sums += ", " sum;
  RANKLAB_STEP_BIN_FIELDS(RANKLAB_BIN_SUM)
#undef RANKLAB_BIN_SUM
#define RANKLAB_PHASE_SUM(name, kind) sums += ", SUM(" #name "_ns)";
  RANKLAB_STEP_PHASES(RANKLAB_PHASE_SUM)
#undef RANKLAB_PHASE_SUM
  return "INSERT INTO step_bins (run_id, " + columnsOf<StepBin>() + ")\nSELECT run_id, rank" +
         sums + R"sql(
FROM (SELECT *, CASE WHEN loss_nan = 0 AND
                          loss BETWEEN -1.7976931348623157e308 AND 1.7976931348623157e308
                     THEN loss END AS finite
      FROM steps WHERE run_id = ?1)
GROUP BY rank, step / ?2)sql";
}

}  // namespace

int64_t RunStore::stepBinWidth(int64_t steps, int64_t ranks) {
  const int64_t per_rank = std::clamp(kStepBinsPerRun / std::max<int64_t>(1, ranks),
                                      kFewestStepBinsPerRank, kStepBinsPerRank);
  if (steps <= per_rank) return 1;
  return int64_t(std::bit_ceil(uint64_t((steps + per_rank - 1) / per_rank)));
}

void RunStore::writeRunDigest(int64_t run_id) {
  writeStepBins(run_id);
  writeRankTotals(run_id);
}

void RunStore::writeRankTotals(int64_t run_id) {
  Statement clear(db_, path_, "clear rank totals", rank_totals::kClear);
  Query(clear).bind(run_id).run();
  Statement insert(db_, path_, "sum steps per rank", rank_totals::insertSql().c_str());
  Query(insert).bind(run_id).run();
}

void RunStore::writeStepBins(int64_t run_id) {
  Statement clear(db_, path_, "clear step bins", "DELETE FROM step_bins WHERE run_id = ?");
  Query(clear).bind(run_id).run();
  Statement span(db_, path_, "measure the steps of each rank", kLongestRankSpan);
  int64_t longest = 0, ranks = 0;
  {
    Query q(span);
    q.bind(run_id);
    if (q.next()) {
      longest = q.int64();
      ranks = q.int64();
    }
  }
  if (longest == 0) return;  // no steps
  Statement insert(db_, path_, "sum steps into bins", insertBinsSql().c_str());
  Query(insert).bind(run_id, stepBinWidth(longest, ranks)).run();
}

void RunStore::summariseSteps(int64_t run_id) {
  requireWritable("sum its steps into bins");
  sqlite::Transaction transaction(db_, path_, "summarise steps");
  writeRunDigest(run_id);
  transaction.commit();
}

std::vector<StepBin> RunStore::stepBins(int64_t run_id) {
  const std::string select =
      selectSql<StepBin>("step_bins", "WHERE run_id = ? ORDER BY rank, first_step");
  Statement statement(db_, path_, "read step bins", select.c_str());
  std::vector<StepBin> bins;
  Query q(statement);
  q.bind(run_id);
  while (q.next()) bins.push_back(readRow<StepBin>(q));
  return bins;
}

}  // namespace ranklab
