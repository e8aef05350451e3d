#include "views/run_store_reader.h"

#include <QFutureWatcher>
#include <QThread>
#include <QtConcurrent/QtConcurrentRun>
#include <exception>

#include "storage/run_store.h"

namespace ranklab {

namespace {

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

Answer<RunList> readRunList(const std::string& path) {
  Answer<RunList> answer;
  try {
    RunStore store(path);
    answer.value.runs = store.listRuns();
    for (const RunRow& run : answer.value.runs)
      if (auto s = store.summary(run.id)) answer.value.summaries.push_back(std::move(*s));
    answer.value.tags = store.tags();
  } catch (const std::exception& e) {
    answer.error = QString::fromStdString(e.what());
  }
  return answer;
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
    for (const RankRow& rank : store.ranks(run_id)) stored.series.setRank(rank);
    store.forEachStep(run_id, [&stored](const StepRow& step) {
      stored.series.addStep(step);
      ++stored.step_rows;
    });
    for (const EvalRow& eval : store.evals(run_id)) stored.series.addEval(eval);
    if (stored.run.status != "running") stored.series.finish(stored.run.status);
    stored.series.updateStates();
    stored.events = store.events(run_id);
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

RunStoreReader::RunStoreReader(QString db_path, QObject* parent)
    : QObject(parent), db_path_(std::move(db_path)) {
  qRegisterMetaType<RunList>();
  qRegisterMetaType<StoredRun>();
}

void RunStoreReader::listRuns() {
  readAsync<RunList>(
      this,
      [path = db_path_.toStdString()] {
        return readWithRetry<RunList>([&] { return readRunList(path); });
      },
      [this](const Answer<RunList>& a) {
        if (a.error.isEmpty())
          emit runsListed(a.value);
        else
          emit failed(a.error);
      });
}

void RunStoreReader::loadRun(int64_t run_id) {
  const quint64 generation = ++load_generation_;
  readAsync<StoredRun>(
      this,
      [path = db_path_.toStdString(), run_id] {
        return readWithRetry<StoredRun>([&] { return readRun(path, run_id); });
      },
      [this, generation](const Answer<StoredRun>& a) {
        if (generation != load_generation_) return;  // a newer request superseded this one
        if (a.error.isEmpty())
          emit runLoaded(a.value);
        else
          emit failed(a.error);
      });
}

}  // namespace ranklab
