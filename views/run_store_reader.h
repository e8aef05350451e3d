// Reads (and, for the runs browser, edits) the run store off the UI thread: each request
// opens its own connection on a pool thread and answers with a typed signal. Widgets never
// touch SQLite.
#pragma once

#include <QFuture>
#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "storage/analysis/analysis_results.h"
#include "storage/analysis/run_diff.h"
#include "storage/records.h"
#include "views/models/compare_models.h"
#include "views/models/run_series.h"
#include "views/models/timeline_data.h"

namespace ranklab {

struct RunList {
  std::vector<RunRow> runs;  // newest first
  std::vector<RunSummary> summaries;
  std::map<int64_t, std::vector<std::string>> tags;
  std::string read_only;  // why the store was opened read-only (a full disk), "" if not
};

// A stored run ready to draw: its curves are built on the pool thread, bounded in size
// however many steps it has (see SampleSeries). A finished run is read from its step bins
// and only each rank's last steps as rows; a run without bins, row by row.
struct StoredRun {
  RunRow run;
  RunSeries series;
  int64_t step_rows = 0;  // step rows the curves cover
  int64_t rows_read = 0;  // of them, read as rows (the rest came summed in bins)
  int64_t bins_read = 0;
  std::vector<EventRow> events;
  // Read for the compare page only: what was predicted for the run, beside its measure.
  std::optional<PredictedAgainstMeasured> prediction;
};

// Summaries of runs that have ended, which no longer change: the runs list sums each one's
// step rows once, not at every refresh (a run starting refreshes the list while its ranks
// want the cores). Keyed by id and creation time, so a deleted id used again is read anew.
class EndedSummaries {
 public:
  std::optional<RunSummary> find(const RunRow& run) const;
  void keep(const RunSummary& summary);

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<int64_t, std::string>, RunSummary> summaries_;
};

// What the timeline page asks for: a window of steps laid out on a pool thread, its spans
// capped (a refinement narrows the cap to the range the person zoomed into).
struct TimelineRequest {
  int64_t run_id = 0;
  int64_t first_step = 0, last_step = -1;
  int latest = 0;       // > 0: instead the last `latest` steps every rank stored (a live run)
  bool align = true;    // the run synchronises every step (TimelineData's alignment)
  bool refine = false;  // the same window as the last answer, another cap: no second read
  SpanCap cap;
};

// The last window the timeline read, whole: a zoom lays its spans out again without
// reading them a second time.
class LaidOutWindow {
 public:
  // The window's timeline with its spans capped, if `request` asks for the window kept.
  std::optional<TimelineData> recap(const TimelineRequest& request) const;
  // Keeps `whole` (all its spans) for request's window; returns it with its spans capped.
  TimelineData keep(const TimelineRequest& request, TimelineData whole);

 private:
  mutable std::mutex mutex_;
  TimelineRequest kept_for_;
  TimelineData skeleton_;            // the window's timeline without its spans
  std::vector<TimelineSpan> spans_;  // all of them
};

// A stored run read, or why it could not be.
struct StoredRunAnswer {
  StoredRun value;
  QString error;  // empty on success
};

class RunStoreReader : public QObject {
  Q_OBJECT

 public:
  explicit RunStoreReader(QString db_path, QObject* parent = nullptr);

  const QString& dbPath() const { return db_path_; }
  // Later requests read this file.
  void setDbPath(const QString& path) {
    db_path_ = path;
    forgetReads();
    ended_summaries_ = std::make_shared<EndedSummaries>();
    laid_out_ = std::make_shared<LaidOutWindow>();
  }

  void listRuns();                   // -> runsListed or failed
  void loadRun(int64_t run_id);      // -> runLoaded or failed; only the latest request answers
  void loadPreview(int64_t run_id);  // -> previewLoaded (the runs page's chart); latest answers
  void loadRuns(const QList<qint64>& run_ids);  // -> runsLoaded (for compare); latest answers
  // A window of steps laid out for the timeline -> timelineProgress while it is read, then
  // timelineLoaded; the latest request answers.
  void loadTimeline(const ranklab::TimelineRequest& request);

  // Edits: each answers with changed(message) or failed(message).
  void renameRun(int64_t run_id, const QString& name);
  void setTags(int64_t run_id, const QStringList& tags);
  void deleteRuns(const QList<qint64>& run_ids);
  void exportCsv(int64_t run_id, const QString& path);    // every step row of the run
  void exportTrace(int64_t run_id, const QString& path);  // Chrome Trace Event JSON
  // The run taken apart across its ranks -> analysisLoaded or failed; latest answers.
  void analyzeRun(int64_t run_id);
  // Run b's step time against run a's -> diffLoaded (with the reason when there is none).
  void diffRuns(int64_t run_a, int64_t run_b);

 signals:
  void runsListed(const ranklab::RunList& list);
  void runLoaded(const ranklab::StoredRun& run);
  void previewLoaded(const ranklab::StoredRun& run);
  void runsLoaded(const std::vector<ranklab::StoredRun>& runs);
  void timelineProgress(qint64 run_id, int done, int of, const QString& stage);
  void timelineLoaded(const ranklab::TimelineRequest& request, const ranklab::TimelineData& data);
  void analysisLoaded(qint64 run_id, const ranklab::RunAnalysis& analysis);
  void diffLoaded(const ranklab::RunDiff& diff, const QString& error);
  void changed(const QString& message);
  void failed(const QString& message);

 private:
  template <typename Edit>
  void edit(Edit edit);
  void readOne(int64_t run_id, quint64* generation,
               void (RunStoreReader::*answer)(const StoredRun&));

  // A run's read shared by whoever asks for it meanwhile (the live page and the runs page's
  // preview ask for the run opened), and the last ended run read, kept until an edit.
  QFuture<StoredRunAnswer> readOf(int64_t run_id);
  void forgetReads();
  std::map<int64_t, QFuture<StoredRunAnswer>> reads_;

  QString db_path_;
  std::shared_ptr<EndedSummaries> ended_summaries_ = std::make_shared<EndedSummaries>();
  std::shared_ptr<LaidOutWindow> laid_out_ = std::make_shared<LaidOutWindow>();
  quint64 load_generation_ = 0;
  quint64 preview_generation_ = 0;
  quint64 compare_generation_ = 0;
  quint64 window_generation_ = 0;
  quint64 analysis_generation_ = 0;
  quint64 diff_generation_ = 0;
};

}  // namespace ranklab

Q_DECLARE_METATYPE(ranklab::RunList)
Q_DECLARE_METATYPE(ranklab::StoredRun)
Q_DECLARE_METATYPE(std::vector<ranklab::StoredRun>)
Q_DECLARE_METATYPE(ranklab::RunAnalysis)
Q_DECLARE_METATYPE(ranklab::RunDiff)
Q_DECLARE_METATYPE(ranklab::TimelineRequest)
Q_DECLARE_METATYPE(ranklab::TimelineData)
