#include "launch/run_recorder.h"

#include <algorithm>
#include <cstdio>

#include "comm/telemetry/step_wire.h"

namespace ranklab {

namespace {
constexpr size_t kMaxBatchRows = 4096;
constexpr auto kMaxBatchAge = std::chrono::milliseconds(250);
constexpr double kSlowWriteS = 1.0;  // a flush this long is worth an event

// A row's own fields from its telemetry message, under the same names (storage/record_fields.h).
void fillFromMessage(EvalRow& row, const telemetry::Eval& message) {
  RANKLAB_EVAL_FIELDS(RANKLAB_FIELD_FROM_MESSAGE)
}
void fillFromMessage(EventRow& row, const telemetry::Event& message) {
  RANKLAB_EVENT_FIELDS(RANKLAB_FIELD_FROM_MESSAGE)
}
void fillFromMessage(ServerLoadRow& row, const telemetry::ServerLoad& message) {
  RANKLAB_SERVER_LOAD_FIELDS(RANKLAB_FIELD_FROM_MESSAGE)
}

// The row `message` makes for `rank` of run `run_id`, sent at time_ns (the launcher's clock).
template <typename Row, typename Message>
Row rowOf(const Message& message, int64_t run_id, int rank, int64_t time_ns) {
  Row row;
  row.run_id = run_id;
  row.rank = rank;
  fillFromMessage(row, message);
  row.time_ns = time_ns;
  return row;
}
}  // namespace

RunRecorder::RunRecorder(RunStore& store, int64_t run_id, int world, RunObserver& observer)
    : store_(store),
      run_id_(run_id),
      observer_(observer),
      ranks_(world),
      rank_dirty_(world, false),
      said_bye_(world, false),
      first_step_start_ns_(world, -1),
      last_step_end_ns_(world, 0),
      earlier_train_ns_(world, 0) {
  for (int r = 0; r < world; ++r) {
    ranks_[r].run_id = run_id;
    ranks_[r].rank = r;
    ranks_[r].status = "starting";
  }
}

void RunRecorder::resume(const std::vector<RankRow>& ranks, int64_t time_offset_ns) {
  for (const RankRow& row : ranks) {
    if (row.rank < 0 || row.rank >= static_cast<int>(ranks_.size())) continue;
    ranks_[static_cast<size_t>(row.rank)] = row;
    said_bye_[static_cast<size_t>(row.rank)] = row.status != "running" && row.status != "starting";
  }
  time_offset_ns_ = time_offset_ns;
}

void RunRecorder::touchRank(int rank) {
  rank_dirty_[rank] = true;
}

void RunRecorder::onStep(int rank, int64_t time_ns, const telemetry::Step& s) {
  StepRow row;
  row.run_id = run_id_;
  row.rank = rank;
  row.step = s.step();
  row.epoch = s.epoch();
  row.samples = s.samples();
  decodeMeasures(s, row);
  row.time_ns = time_ns;
  if (first_step_start_ns_[rank] < 0) {
    first_step_start_ns_[rank] = time_ns - phaseTotal(row.phases());
  }
  last_step_end_ns_[rank] = time_ns;
  ++steps_received_;
  observer_.onStep(row);
  batch_.steps.push_back(std::move(row));
}

void RunRecorder::ingest(const telemetry::Envelope& e) {
  const int rank = e.rank();
  RankRow& r = rankRow(rank);
  r.last_seq = std::max<int64_t>(r.last_seq, static_cast<int64_t>(e.seq()));
  if (r.status == "starting") r.status = "running";
  touchRank(rank);
  switch (e.body_case()) {
    case telemetry::Envelope::kHello:
      r.host = e.hello().host();
      r.pid = e.hello().pid();
      observer_.onRank(r);
      break;
    case telemetry::Envelope::kStep:
      onStep(rank, shifted(e.time_ns()), e.step());
      break;
    case telemetry::Envelope::kEval: {
      const EvalRow row = rowOf<EvalRow>(e.eval(), run_id_, rank, shifted(e.time_ns()));
      observer_.onEval(row);
      batch_.evals.push_back(row);
      break;
    }
    case telemetry::Envelope::kEvent: {
      const EventRow row = rowOf<EventRow>(e.event(), run_id_, rank, shifted(e.time_ns()));
      observer_.onEvent(row);
      batch_.events.push_back(row);
      break;
    }
    case telemetry::Envelope::kServerLoad: {
      const ServerLoadRow row =
          rowOf<ServerLoadRow>(e.server_load(), run_id_, rank, shifted(e.time_ns()));
      observer_.onServerLoad(row);
      batch_.server_loads.push_back(row);
      break;
    }
    case telemetry::Envelope::kBye:
      said_bye_[rank] = true;
      r.exit_status = e.bye().exit_status();
      r.train_ns = earlier_train_ns_[rank] + e.bye().train_ns();
      r.status = r.exit_status == 0 ? "done" : "failed";
      observer_.onRank(r);
      break;
    case telemetry::Envelope::kSpan: {
      const telemetry::Span& span = e.span();
      const SpanRow row{run_id_,
                        rank,
                        span.step(),
                        span.phase(),
                        shifted(span.start_ns()),
                        shifted(span.end_ns()),
                        span.has_part() ? span.part() : -1,
                        span.has_peer() ? span.peer() : -1,
                        span.has_chunk() ? span.chunk() : -1,
                        span.bytes()};
      observer_.onSpan(row);
      batch_.spans.push_back(row);
      break;
    }
    default:  // heartbeats only refresh the rank's sequence number here
      break;
  }
  flushIfDue();
}

void RunRecorder::launcherEvent(const std::string& kind, const std::string& text, int rank,
                                int64_t step, int64_t time_ns) {
  const EventRow row{run_id_, rank, step, kind, text, time_ns};
  observer_.onEvent(row);
  batch_.events.push_back(row);
}

void RunRecorder::setGaps(int rank, int64_t gaps) {
  if (rankRow(rank).seq_gaps == gaps) return;
  rankRow(rank).seq_gaps = gaps;
  touchRank(rank);
}

void RunRecorder::flushIfDue() {
  const size_t rows =
      batch_.steps.size() + batch_.evals.size() + batch_.events.size() + batch_.server_loads.size();
  if (rows >= kMaxBatchRows || std::chrono::steady_clock::now() - last_flush_ >= kMaxBatchAge) {
    flush();
  }
}

void RunRecorder::flush() {
  for (size_t r = 0; r < ranks_.size(); ++r) {
    if (rank_dirty_[r]) batch_.ranks.push_back(ranks_[r]);
    rank_dirty_[r] = false;
  }
  const auto start = std::chrono::steady_clock::now();
  const size_t rows =
      batch_.steps.size() + batch_.evals.size() + batch_.events.size() + batch_.server_loads.size();
  if (!batch_.empty()) store_.write(batch_);
  batch_.clear();
  last_flush_ = std::chrono::steady_clock::now();
  const double took_s = std::chrono::duration<double>(last_flush_ - start).count();
  // The live charts stood still meanwhile: say it was the store, not the ranks.
  if (took_s >= kSlowWriteS) {
    char text[200];
    std::snprintf(text, sizeof text,
                  "the run store took %.1f s to write %zu rows (its file locked by another "
                  "writer, or a slow disk); the ranks' messages waited in the socket, none lost",
                  took_s, rows);
    launcherEvent("log", text);
  }
}

bool RunRecorder::allRanksReported() const {
  return std::none_of(ranks_.begin(), ranks_.end(),
                      [](const RankRow& r) { return r.status == "starting"; });
}

bool RunRecorder::allRanksSaidBye() const {
  return ranksWithoutBye().empty();
}

std::vector<int> RunRecorder::ranksWithoutBye() const {
  std::vector<int> ranks;
  for (size_t r = 0; r < said_bye_.size(); ++r) {
    if (!said_bye_[r]) ranks.push_back(static_cast<int>(r));
  }
  return ranks;
}

std::vector<int> RunRecorder::ranksNeverHeard() const {
  std::vector<int> ranks;
  for (size_t r = 0; r < ranks_.size(); ++r)
    if (ranks_[r].status == "starting") ranks.push_back(static_cast<int>(r));
  return ranks;
}

bool RunRecorder::anyRankFailed() const {
  return std::any_of(ranks_.begin(), ranks_.end(),
                     [](const RankRow& r) { return r.status == "failed"; });
}

int64_t RunRecorder::trainNsThisAttempt(size_t r) const {
  if (said_bye_[r]) return ranks_[r].train_ns - earlier_train_ns_[r];
  const bool stepped = first_step_start_ns_[r] >= 0;
  return stepped ? last_step_end_ns_[r] - first_step_start_ns_[r] : 0;
}

int64_t RunRecorder::slowestTrainNs() const {
  int64_t slowest = 0;
  for (size_t r = 0; r < ranks_.size(); ++r)
    slowest = std::max(slowest, earlier_train_ns_[r] + trainNsThisAttempt(r));
  return slowest;
}

int64_t RunRecorder::latestStepEndNs() const {
  return *std::max_element(last_step_end_ns_.begin(), last_step_end_ns_.end());
}

int64_t RunRecorder::nowNs() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                              created_)
      .count();
}

void RunRecorder::beginAttempt(int world) {
  // The new ranks count time from their own start: place it after the failed attempt's.
  time_offset_ns_ = nowNs();
  for (size_t r = 0; r < ranks_.size(); ++r) {
    earlier_train_ns_[r] += trainNsThisAttempt(r);
    ranks_[r].train_ns = earlier_train_ns_[r];
    touchRank(static_cast<int>(r));
    const bool left = static_cast<int>(r) >= world;
    said_bye_[r] = left;  // nothing more to wait for from a rank that left
    if (left) {
      ranks_[r].status = "left";
      continue;
    }
    ranks_[r].status = "starting";
    first_step_start_ns_[r] = -1;
    last_step_end_ns_[r] = 0;
    touchRank(static_cast<int>(r));
  }
}

}  // namespace ranklab
