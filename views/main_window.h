// The workbench window: stored runs on the left, the selected (or live) run on the right,
// the job file and Launch/Stop on top.
#pragma once

#include <QMainWindow>
#include <QStringList>

#include "views/run_session.h"
#include "views/run_store_reader.h"

class QLineEdit;
class QPlainTextEdit;
class QSortFilterProxyModel;
class QTableView;

namespace ranklab {

class LiveRunModel;
class LivePage;
class RunsTableModel;

struct WorkbenchOptions {
  QString db_path;        // the run store file
  QString job_path;       // job in use at start ("" = none yet)
  QStringList overrides;  // "section.key=value", applied to every launch
  QString worker_path;    // ranklab-worker; "" = JobRunner's default
};

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(WorkbenchOptions options, QWidget* parent = nullptr);
  ~MainWindow() override;

  void setJobPath(const QString& path);
  QString jobPath() const { return options_.job_path; }
  void launch();
  void stop();
  bool isRunning() const;
  void refreshRuns();
  void selectRun(int64_t run_id);  // in the list; the page follows

  LivePage* livePage() const { return page_; }
  QTableView* runsView() const { return runs_view_; }
  RunsTableModel* runsModel() const { return runs_model_; }

 signals:
  void runsRefreshed();
  void runShown(qint64 run_id);  // the page now draws this run
  void runEnded(const ranklab::RunOutcome& outcome);

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void buildToolbar();
  QWidget* buildRunsPane();
  void openJobDialog();
  void updateActions();
  void onRunsListed(const RunList& list);
  void onFirstListingDone();
  void onCurrentRunChanged();
  void onRunLoaded(const StoredRun& run);
  void onStarted(qint64 run_id, const QStringList& command);
  void onEnded(const RunOutcome& outcome);
  void showLive();
  void showError(const QString& what, const QString& message);
  void appendLog(const QString& line);

  WorkbenchOptions options_;
  RunStoreReader* reader_;
  RunSession* session_;
  RunsTableModel* runs_model_;
  QSortFilterProxyModel* runs_proxy_;
  LiveRunModel* live_model_;    // the launched run, filled as it goes
  LiveRunModel* stored_model_;  // a run reopened from the store
  QTableView* runs_view_ = nullptr;
  LivePage* page_;
  QPlainTextEdit* log_;
  QLineEdit* job_edit_ = nullptr;
  QAction* open_action_ = nullptr;
  QAction* launch_action_ = nullptr;
  QAction* stop_action_ = nullptr;
  int64_t live_run_id_ = 0;   // last launched run; 0 before its start is known
  int64_t shown_run_id_ = 0;  // run on the page; -1: a launch whose id is not known yet
  int64_t loading_run_id_ = 0;
  bool first_listing_ = true;
  bool launch_pending_ = false;  // launch() came before the store was first read
};

}  // namespace ranklab
