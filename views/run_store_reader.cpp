#include "views/run_store_reader.h"

#include <QFutureWatcher>
#include <QPromise>
#include <QThread>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <bit>
#include <exception>
#include <functional>
#include <future>
#include <iterator>
#include <limits>
#include <span>
#include <stdexcept>

#include "engine/job/control_characters.h"
#include "storage/analysis/run_analysis.h"
#include "storage/analysis/step_measure.h"
#include "storage/chrome_trace.h"
#include "storage/run_origin.h"
#include "storage/run_store.h"
#include "storage/steps_csv.h"
#include "views/models/record_metatypes.h"
#include "views/models/timeline_data.h"

namespace ranklab {

namespace {

constexpr int kTimelineStages = 3;  // steps read, spans read, laid out

template <typename T>
struct Answer {
  T value;
  QString error;  // empty on success
};

// A writer (the live run) may hold the file for a moment; reading again shortly succeeds.
template <typename T, typename Read>
Answer<T> readWithRetry(Read read) {
  constexpr int kAttempts = 20;
  Answer<T> answer;
  for (int attempt = 1; attempt <= kAttempts; ++attempt) {
    answer = read();
    const bool busy = answer.error.contains(QLatin1String("locked")) ||
                      answer.error.contains(QLatin1String("busy"));
    if (!busy) break;
    QThread::msleep(50 * attempt);
  }
  return answer;
}

// `read(store)` on a store opened at `path`, retried while a writer holds the file; a
// failure's message as the answer's error, `unanswered` its value.
template <typename T, typename Read>
Answer<T> readStore(const std::string& path, const T& unanswered, Read read) {
  return readWithRetry<T>([&] {
    Answer<T> answer{unanswered, {}};
    try {
      RunStore store(path);
      answer.value = read(store);
    } catch (const std::exception& e) {
      answer.error = QString::fromStdString(e.what());
    }
    return answer;
  });
}

Answer<RunList> readRunList(const std::string& path, EndedSummaries& ended) {
  Answer<RunList> answer;
  try {
    RunStore store(path);
    answer.value.runs = store.listRuns();
    for (const RunRow& run : answer.value.runs) {
      std::optional<RunSummary> s = ended.find(run);
      if (!s && (s = store.summary(run.id)) && run.status != "running") ended.keep(*s);
      if (s) answer.value.summaries.push_back(std::move(*s));
    }
    answer.value.tags = store.tags();
    answer.value.read_only = store.readOnlyReason();
  } catch (const std::exception& e) {
    answer.error = QString::fromStdString(e.what());
  }
  return answer;
}

// Every step row of the run; the upper half of the ranks is read by a second thread on
// its own connection.
void readEveryRow(RunStore& store, const std::string& path, StoredRun& stored) {
  const int64_t run_id = stored.run.id;
  // A store read on a full disk may hold its file for one connection alone: no second one.
  const int split = store.readOnlyReason().empty() ? stored.run.world / 2 : 0;
  auto upper = std::async(std::launch::async, [&path, run_id, split, world = stored.run.world] {
    std::pair<RunSeries, int64_t> part;
    part.first.setBulkLoad(true);
    if (split == 0) return part;
    RunStore own(path);
    own.forEachStep(run_id, split, std::max(split, world - 1), [&part](const StepRow& step) {
      part.first.addStep(step);
      ++part.second;
    });
    return part;
  });
  const auto visit = [&stored](const StepRow& step) {
    stored.series.addStep(step);
    ++stored.step_rows;
  };
  if (split == 0)
    store.forEachStep(run_id, visit);
  else
    store.forEachStep(run_id, 0, split - 1, visit);
  auto [series, rows] = upper.get();
  stored.series.absorb(std::move(series));
  stored.step_rows += rows;
  // Ranks past the run's world (should there be any) are read last.
  if (split > 0)
    store.forEachStep(run_id, std::max(split, stored.run.world), std::numeric_limits<int>::max(),
                      visit);
  stored.rows_read = stored.step_rows;
}

// Each rank's bins, then its last steps as rows (RunSeries::firstBinAsRows).
void readBinsThenRows(RunStore& store, const std::vector<StepBin>& bins, StoredRun& stored) {
  int64_t widest = 1;  // the width the store chose for the run (a bin spans it when whole)
  for (const StepBin& b : bins) widest = std::max(widest, b.last_step - b.first_step + 1);
  const int64_t width = int64_t(std::bit_ceil(uint64_t(widest)));
  for (auto begin = bins.begin(); begin != bins.end();) {
    const auto end =
        std::find_if(begin, bins.end(), [&](auto& b) { return b.rank != begin->rank; });
    const std::span<const StepBin> of_rank(&*begin, size_t(end - begin));
    const size_t as_rows = RunSeries::firstBinAsRows(of_rank, stored.run.world);
    for (size_t i = 0; i < as_rows; ++i) {
      stored.series.addBin(of_rank[i], width);
      stored.step_rows += of_rank[i].steps;
    }
    stored.bins_read += int64_t(as_rows);
    for (const StepRow& step :
         store.stepsOfRankFrom(stored.run.id, begin->rank, of_rank[as_rows].first_step)) {
      stored.series.addStep(step);
      ++stored.step_rows;
      ++stored.rows_read;
    }
    begin = end;
  }
}

Answer<StoredRun> readRun(const std::string& path, int64_t run_id) {
  Answer<StoredRun> answer;
  try {
    RunStore store(path);
    auto run = store.run(run_id);
    if (!run) {
      answer.error =
          QStringLiteral("%1: run %2 not found").arg(QString::fromStdString(path)).arg(run_id);
      return answer;
    }
    StoredRun& stored = answer.value;
    stored.run = std::move(*run);
    stored.series.setWorld(stored.run.world);
    stored.series.setBulkLoad(true);
    stored.series.setSimulated(originOf(stored.run) == RunOrigin::kSimulated);
    // A running run has no bins yet; a run finished by an older ranklab has none either.
    const std::vector<StepBin> bins = store.stepBins(run_id);
    if (bins.empty())
      readEveryRow(store, path, stored);
    else
      readBinsThenRows(store, bins, stored);
    for (const RankRow& rank : store.ranks(run_id)) stored.series.setRank(rank);
    for (const EvalRow& eval : store.evals(run_id)) stored.series.addEval(eval);
    if (stored.run.status != "running")
      stored.series.finish(stored.run.status);
    else
      stored.series.endBulkLoad();  // the follower's steps come next
    stored.series.updateStates();
    stored.events = store.events(run_id);
    for (const EventRow& event : stored.events) stored.series.addEvent(event);
    for (const ServerLoadRow& load : store.serverLoads(run_id)) stored.series.addServerLoad(load);
  } catch (const std::exception& e) {
    answer.error = QString::fromStdString(e.what());
  }
  return answer;
}

// Runs read() on the pool; hands its answer to deliver() on this object's thread.
template <typename T, typename Read, typename Deliver>
void readAsync(QObject* owner, Read read, Deliver deliver) {
  auto* watcher = new QFutureWatcher<Answer<T>>(owner);
  QObject::connect(watcher, &QFutureWatcher<Answer<T>>::finished, owner, [watcher, deliver] {
    deliver(watcher->result());
    watcher->deleteLater();
  });
  watcher->setFuture(QtConcurrent::run(std::move(read)));
}

}  // namespace

std::optional<RunSummary> EndedSummaries::find(const RunRow& run) const {
  std::lock_guard lock(mutex_);
  const auto found = summaries_.find({run.id, run.created});
  if (found == summaries_.end()) return std::nullopt;
  RunSummary summary = found->second;
  summary.run = run;  // its name may have changed since
  return summary;
}

void EndedSummaries::keep(const RunSummary& summary) {
  std::lock_guard lock(mutex_);
  summaries_[{summary.run.id, summary.run.created}] = summary;
}

RunStoreReader::RunStoreReader(QString db_path, QObject* parent)
    : QObject(parent), db_path_(std::move(db_path)) {
  registerRecordMetaTypes();
  qRegisterMetaType<RunList>();
  qRegisterMetaType<StoredRun>();
  qRegisterMetaType<std::vector<StoredRun>>();
  qRegisterMetaType<RunAnalysis>();
  qRegisterMetaType<RunDiff>();
  qRegisterMetaType<TimelineRequest>();
  qRegisterMetaType<TimelineData>();
}

void RunStoreReader::listRuns() {
  readAsync<RunList>(
      this,
      [path = db_path_.toStdString(), ended = ended_summaries_] {
        return readWithRetry<RunList>([&] { return readRunList(path, *ended); });
      },
      [this](const Answer<RunList>& a) {
        if (a.error.isEmpty())
          emit runsListed(a.value);
        else
          emit failed(a.error);
      });
}

void RunStoreReader::loadRun(int64_t run_id) {
  readOne(run_id, &load_generation_, &RunStoreReader::runLoaded);
}

void RunStoreReader::loadPreview(int64_t run_id) {
  readOne(run_id, &preview_generation_, &RunStoreReader::previewLoaded);
}

// One run; the answer is dropped when a newer request of the same kind was made since.
void RunStoreReader::readOne(int64_t run_id, quint64* generation,
                             void (RunStoreReader::*answer)(const StoredRun&)) {
  const quint64 mine = ++*generation;
  auto* watcher = new QFutureWatcher<StoredRunAnswer>(this);
  connect(watcher, &QFutureWatcherBase::finished, this,
          [this, watcher, run_id, generation, mine, answer] {
            const StoredRunAnswer a = watcher->result();
            watcher->deleteLater();
            // Done: a run still going is read afresh next time; an ended one stays kept.
            const auto read = reads_.find(run_id);
            if (read != reads_.end() && read->second.isFinished() &&
                (!a.error.isEmpty() || a.value.run.status == "running"))
              reads_.erase(read);
            if (mine != *generation) return;
            if (a.error.isEmpty())
              emit(this->*answer)(a.value);
            else
              emit failed(a.error);
          });
  watcher->setFuture(readOf(run_id));
}

QFuture<StoredRunAnswer> RunStoreReader::readOf(int64_t run_id) {
  if (const auto read = reads_.find(run_id); read != reads_.end()) return read->second;
  // One ended run kept at a time: a thousand ranks' curves are tens of MB.
  std::erase_if(reads_, [](const auto& read) { return read.second.isFinished(); });
  QFuture<StoredRunAnswer> future = QtConcurrent::run([path = db_path_.toStdString(), run_id] {
    Answer<StoredRun> a = readWithRetry<StoredRun>([&] { return readRun(path, run_id); });
    return StoredRunAnswer{std::move(a.value), a.error};
  });
  reads_[run_id] = future;
  return future;
}

void RunStoreReader::forgetReads() {
  reads_.clear();  // reads in flight answer those that asked, and no one after
}

void RunStoreReader::loadRuns(const QList<qint64>& run_ids) {
  const quint64 generation = ++compare_generation_;
  readAsync<std::vector<StoredRun>>(
      this,
      [path = db_path_.toStdString(), run_ids] {
        Answer<std::vector<StoredRun>> all;
        for (qint64 id : run_ids) {
          auto one = readWithRetry<StoredRun>([&] { return readRun(path, id); });
          if (!one.error.isEmpty()) return Answer<std::vector<StoredRun>>{{}, one.error};
          if (auto predicted = predictionOf(one.value.events)) {
            RunStore store(path);  // the run's steps by the prediction's measure
            one.value.prediction = {*predicted, measuredStep(store, id)};
          }
          all.value.push_back(std::move(one.value));
        }
        return all;
      },
      [this, generation](const Answer<std::vector<StoredRun>>& a) {
        if (generation != compare_generation_) return;
        if (a.error.isEmpty())
          emit runsLoaded(a.value);
        else
          emit failed(a.error);
      });
}

namespace {

// The window's rows read and laid out, each stage told to `stage` (0..kTimelineStages).
TimelineData layOutWindow(const std::string& path, const TimelineRequest& request,
                          LaidOutWindow& laid_out, const std::function<void(int, QString)>& stage) {
  RunStore store(path);
  int64_t first = request.first_step, last = request.last_step;
  if (request.latest > 0) {
    last = store.lastCommonStep(request.run_id);
    first = std::max<int64_t>(0, last - request.latest + 1);
  }
  stage(0, RunStoreReader::tr("reading steps %1 to %2").arg(first).arg(last));
  StepWindow window;
  window.steps = store.stepsBetween(request.run_id, first, last);
  stage(1, RunStoreReader::tr("reading spans"));
  for (SpanRow& span : store.spans(request.run_id))  // an epoch's, a sampled step's pieces
    if (span.step >= first - 1 && span.step <= last) window.spans.push_back(std::move(span));
  for (EventRow& event : store.events(request.run_id))  // few: what happened to the run
    if (isTimelineMark(event) && event.step >= first && event.step <= last)
      window.events.push_back(std::move(event));
  stage(2, RunStoreReader::tr("laying out %L1 step rows and %L2 spans")
               .arg(qlonglong(window.steps.size()))
               .arg(qlonglong(window.spans.size())));
  return laid_out.keep(request, buildTimeline(request.run_id, window.steps, request.align,
                                              window.spans, window.events));
}

}  // namespace

void RunStoreReader::loadTimeline(const TimelineRequest& request) {
  const quint64 mine = ++window_generation_;
  auto* watcher = new QFutureWatcher<Answer<TimelineData>>(this);
  connect(watcher, &QFutureWatcherBase::progressTextChanged, this,
          [this, watcher, mine, run_id = request.run_id](const QString& text) {
            if (mine == window_generation_)
              emit timelineProgress(run_id, watcher->progressValue(), kTimelineStages, text);
          });
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, mine, request] {
    const Answer<TimelineData> a = watcher->result();
    watcher->deleteLater();
    if (mine != window_generation_) return;
    if (a.error.isEmpty())
      emit timelineLoaded(request, a.value);
    else
      emit failed(a.error);
  });
  watcher->setFuture(
      QtConcurrent::run([path = db_path_.toStdString(), request,
                         laid_out = laid_out_](QPromise<Answer<TimelineData>>& promise) {
        promise.setProgressRange(0, kTimelineStages);
        const auto stage = [&promise](int done, const QString& text) {
          promise.setProgressValueAndText(done, text);
        };
        if (std::optional<TimelineData> again = laid_out->recap(request)) {
          promise.addResult(Answer<TimelineData>{std::move(*again), {}});
          return;
        }
        promise.addResult(readWithRetry<TimelineData>([&] {
          Answer<TimelineData> answer;
          try {
            answer.value = layOutWindow(path, request, *laid_out, stage);
          } catch (const std::exception& e) {
            answer.error = QString::fromStdString(e.what());
          }
          return answer;
        }));
      }));
}

std::optional<TimelineData> LaidOutWindow::recap(const TimelineRequest& request) const {
  std::lock_guard lock(mutex_);
  const TimelineRequest& k = kept_for_;
  if (!request.refine || k.run_id != request.run_id || k.first_step != request.first_step ||
      k.last_step != request.last_step || k.align != request.align)
    return std::nullopt;
  TimelineData out = skeleton_;
  out.spans = capSpans(spans_, request.cap);
  return out;
}

TimelineData LaidOutWindow::keep(const TimelineRequest& request, TimelineData whole) {
  std::lock_guard lock(mutex_);
  kept_for_ = request;  // as the window read: a live run's latest steps are steps too
  kept_for_.first_step = whole.first_step;
  kept_for_.last_step = whole.last_step;
  spans_ = std::move(whole.spans);
  skeleton_ = std::move(whole);
  skeleton_.spans.clear();
  TimelineData out = skeleton_;
  out.spans = capSpans(spans_, request.cap);
  return out;
}

void RunStoreReader::analyzeRun(int64_t run_id) {
  const quint64 mine = ++analysis_generation_;
  readAsync<RunAnalysis>(
      this,
      [path = db_path_.toStdString(), run_id] {
        return readStore<RunAnalysis>(
            path, {}, [&](RunStore& store) { return ranklab::analyzeRun(store, run_id); });
      },
      [this, run_id, mine](const Answer<RunAnalysis>& a) {
        if (mine != analysis_generation_) return;
        if (a.error.isEmpty())
          emit analysisLoaded(run_id, a.value);
        else
          emit failed(a.error);
      });
}

void RunStoreReader::diffRuns(int64_t run_a, int64_t run_b) {
  const quint64 mine = ++diff_generation_;
  readAsync<RunDiff>(
      this,
      [path = db_path_.toStdString(), run_a, run_b] {
        RunDiff unanswered;  // names the runs even when it fails
        unanswered.run_a = run_a;
        unanswered.run_b = run_b;
        return readStore<RunDiff>(path, unanswered, [&](RunStore& store) {
          return ranklab::diffRuns(store, run_a, run_b);
        });
      },
      [this, mine](const Answer<RunDiff>& a) {
        if (mine == diff_generation_) emit diffLoaded(a.value, a.error);
      });
}

namespace {

// The CLI's rule for names and tags, so the store holds no text one front end refuses.
void refuseUnfitText(const char* what, const std::string& text) {
  if (const auto bad = textProblemIn(text))
    throw std::invalid_argument(std::string(what) + " " + *bad);
}

}  // namespace

// An edit runs `edit(store)` on the pool; it returns the message to show when done.
template <typename Edit>
void RunStoreReader::edit(Edit edit) {
  forgetReads();  // a run renamed or deleted reads anew
  readAsync<QString>(
      this, [path = db_path_.toStdString(), edit] { return readStore<QString>(path, {}, edit); },
      [this](const Answer<QString>& a) {
        if (a.error.isEmpty())
          emit changed(a.value);
        else
          emit failed(a.error);
      });
}

void RunStoreReader::renameRun(int64_t run_id, const QString& name) {
  edit([run_id, name = name.toStdString()](RunStore& store) {
    refuseUnfitText("the new name", name);
    store.renameRun(run_id, name);
    return tr("Run %1 renamed").arg(run_id);
  });
}

void RunStoreReader::setTags(int64_t run_id, const QStringList& tags) {
  std::vector<std::string> list;
  for (const QString& t : tags) list.push_back(t.toStdString());
  edit([run_id, list](RunStore& store) {
    for (const std::string& t : list) refuseUnfitText("tag", t);
    store.setTags(run_id, list);
    return tr("Tags of run %1 saved").arg(run_id);
  });
}

void RunStoreReader::deleteRuns(const QList<qint64>& run_ids) {
  edit([run_ids](RunStore& store) {
    for (qint64 id : run_ids) store.deleteRun(id);
    return tr("%n run(s) deleted", "", int(run_ids.size()));
  });
}

void RunStoreReader::exportCsv(int64_t run_id, const QString& path) {
  edit([run_id, path](RunStore& store) {
    const int64_t rows = exportStepsCsv(store, run_id, path.toStdString());
    return tr("Run %1: %2 step rows written to %3").arg(run_id).arg(rows).arg(path);
  });
}

void RunStoreReader::exportTrace(int64_t run_id, const QString& path) {
  edit([run_id, path](RunStore& store) {
    const int64_t events = exportChromeTrace(store, run_id, path.toStdString());
    return tr("Run %1: %2 trace events written to %3 (open it in Perfetto or chrome://tracing)")
        .arg(run_id)
        .arg(events)
        .arg(path);
  });
}

}  // namespace ranklab
