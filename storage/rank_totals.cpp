#include "storage/rank_totals.h"

#include "storage/step_record.h"

namespace ranklab::rank_totals {
namespace {

// The columns of rank_totals after run_id, as the steps sum them.
std::string sumsOverSteps() {
  // compute_ns: the phases of kind kCompute (storage/step_record.h), summed per step.
  std::string compute;
#define RANKLAB_COMPUTE_TERM(name, kind)      \
  if (PhaseKind::kind == PhaseKind::kCompute) \
    compute += (compute.empty() ? "" : " + ") + std::string(#name "_ns");
  RANKLAB_STEP_PHASES(RANKLAB_COMPUTE_TERM)
#undef RANKLAB_COMPUTE_TERM
  return "rank, COUNT(*) AS n_steps, SUM(samples) AS samples, SUM(" + compute +
         R"sql() AS compute_ns,
         SUM(comm_ns) AS comm_ns, SUM(wait_ns) AS wait_ns, SUM(bytes_tx) AS bytes_tx,
         SUM(bytes_raw) AS bytes_raw, SUM(overflow) AS overflows,
         SUM(comm_hidden_ns) AS hidden_ns, AVG(staleness) AS staleness,
         MAX(stashed) AS stashed, MAX(stashed_bytes) AS stashed_bytes,
         MAX(mem_params) AS mem_params, MAX(mem_grads) AS mem_grads,
         MAX(mem_optimizer) AS mem_optimizer, MAX(mem_activations) AS mem_activations,
         MAX(mem_buffers) AS mem_buffers,
         AVG(allreduces) AS allreduces, AVG(reduce_scatters) AS reduce_scatters,
         AVG(all_gathers) AS all_gathers, AVG(sends) AS sends, AVG(recvs) AS recvs,
         SUM(bytes_tensor) AS bytes_tensor, SUM(bytes_pipeline) AS bytes_pipeline
  FROM steps WHERE run_id = ?1 GROUP BY rank)sql";
}

}  // namespace

std::string selectSql(bool stored) {
  const std::string totals = stored ? std::string("SELECT * FROM rank_totals WHERE run_id = ?1")
                                    : "SELECT " + sumsOverSteps();
  return "WITH totals AS (" + totals + R"sql(),
known AS (SELECT rank FROM ranks WHERE run_id = ?1 UNION SELECT rank FROM totals)
SELECT known.rank, COALESCE(n_steps, 0), COALESCE(samples, 0), COALESCE(compute_ns, 0),
       COALESCE(comm_ns, 0), COALESCE(wait_ns, 0), COALESCE(bytes_tx, 0),
       COALESCE(bytes_raw, 0), COALESCE(overflows, 0),
       COALESCE(hidden_ns, 0), COALESCE(staleness, 0), COALESCE(stashed, 0),
       COALESCE(stashed_bytes, 0), COALESCE(mem_params, 0), COALESCE(mem_grads, 0),
       COALESCE(mem_optimizer, 0), COALESCE(mem_activations, 0), COALESCE(allreduces, 0),
       COALESCE(reduce_scatters, 0), COALESCE(all_gathers, 0), COALESCE(sends, 0),
       COALESCE(recvs, 0), COALESCE(mem_buffers, 0), COALESCE(bytes_tensor, 0),
       COALESCE(bytes_pipeline, 0)
FROM known LEFT JOIN totals USING (rank) ORDER BY known.rank)sql";
}

std::string insertSql() {
  return "INSERT INTO rank_totals SELECT ?1 AS run_id, " + sumsOverSteps();
}

}  // namespace ranklab::rank_totals
