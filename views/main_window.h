// The workbench window: one tab per page (setup, plan, live, timeline, runs, compare, learn),
// Launch and Stop in the toolbar. It wires pages to the run thread and the store reader; pages only
// draw what they are given.
#pragma once

#include <QElapsedTimer>
#include <QMainWindow>
#include <QStringList>

#include "views/run_session.h"
#include "views/run_store_reader.h"

class QLabel;
class QTabWidget;
class QTableView;

namespace ranklab {

class ComparePage;
class LearnPage;
class TimelinePage;
class AnalysisPage;
class LiveRunModel;
class LivePage;
class LogModel;
class PlanPage;
class RunsPage;
class RunsTableModel;
class SetupPage;

struct WorkbenchOptions {
  QString db_path;        // the run store file
  QString job_path;       // job loaded into the setup page at start ("" = defaults)
  QStringList overrides;  // "section.key=value", applied to the form at start
  QString worker_path;    // ranklab-worker; "" = JobRunner's default
  QString launcher_path;  // ranklab, the CLI that runs a launched job; "" = beside this program
  QString presets_dir;    // resources/jobs
  int64_t open_run = 0;   // show this stored run once the store is read
  QList<qint64> compare;  // compare these stored runs once the store is read

  // --allow-foreign-store: open a store another account owns; passed on to the launches.
  bool allow_foreign_store = false;
};

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  enum Page { SetupTab, PlanTab, LiveTab, TimelineTab, AnalysisTab, RunsTab, CompareTab, LearnTab };

  explicit MainWindow(WorkbenchOptions options, QWidget* parent = nullptr);
  ~MainWindow() override;

  void setJobPath(const QString& path);  // loads it into the setup page
  QString jobPath() const;
  // The setup page's job; refused (and said why) while it is invalid. show_monitor: go to
  // the live page when launched from the setup page.
  void launch(bool show_monitor = true);
  // The setup page's job simulated live (the Simulate button): its ranks' records through
  // the collector at simulate.rate, as a job of that many ranks would send them.
  void simulate(bool show_monitor = true);
  // Follows a stored run that is still going (the newest one is followed when the store is
  // first read); false when one is followed already.
  bool attach(const RunRow& run);
  // Every lost Slurm run that left a follow record (its launcher killed while its job ran)
  // is taken over, the newest followed; true when one is followed.
  bool takeOverSlurmRuns(const std::vector<RunRow>& runs);
  // Continues a stored run from its checkpoint as a new run on `ranks` ranks (the runs page's
  // Resume; elastic when the number differs), followed on the live page.
  bool resume(const RunRow& run, int ranks);
  void stop();
  bool isRunning() const;
  void refreshRuns();
  void selectRun(int64_t run_id);  // in the runs list
  void openRun(int64_t run_id);    // on the live page
  void showPage(Page page);
  static bool pageFromName(const QString& name, Page* page);
  void openDb(const QString& path);
  void compareRuns(const QList<qint64>& run_ids);  // on the compare page

  LivePage* livePage() const { return page_; }
  SetupPage* setupPage() const { return setup_; }
  PlanPage* planPage() const { return plan_page_; }
  RunsPage* runsPage() const { return runs_page_; }
  ComparePage* comparePage() const { return compare_page_; }
  TimelinePage* timelinePage() const { return timeline_page_; }
  AnalysisPage* analysisPage() const { return analysis_page_; }
  LearnPage* learnPage() const { return learn_page_; }
  QTableView* runsView() const;
  RunsTableModel* runsModel() const { return runs_model_; }
  QTabWidget* tabs() const { return tabs_; }

 signals:
  void runsRefreshed();
  void runShown(qint64 run_id);  // the live page now draws this run
  void runEnded(const ranklab::RunOutcome& outcome);

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void buildToolbar();
  void connectSession();
  void connectRunsPage();
  void connectStoredRunPages();
  void connectPlanPage();
  void buildPages();  // the tabs, the window's size
  void connectLearnPage();
  void updateActions();
  void applyOverrides(const QStringList& overrides);
  void onRunsListed(const RunList& list);
  void onFirstListingDone();
  void onRunLoaded(const StoredRun& run);
  void onStarted(qint64 run_id, const QStringList& command);
  void onEnded(const RunOutcome& outcome);
  void clearLivePage(int world, const QString& strategy);
  void showFollowedRun(const QString& headline, const QString& status);
  void showLive();
  void previewLiveRun();
  void showError(const QString& what, const QString& message);
  void appendLog(int rank, bool is_stderr, const QString& line);

  WorkbenchOptions options_;
  RunStoreReader* reader_;
  RunSession* session_;
  RunsTableModel* runs_model_;
  LiveRunModel* live_model_;    // the launched run, filled as it goes
  LiveRunModel* stored_model_;  // a run reopened from the store
  LogModel* log_model_;
  QTabWidget* tabs_;
  SetupPage* setup_;
  PlanPage* plan_page_;
  LivePage* page_;
  RunsPage* runs_page_;
  ComparePage* compare_page_;
  TimelinePage* timeline_page_;
  AnalysisPage* analysis_page_;
  LearnPage* learn_page_;
  QString live_strategy_;  // of the launched run, for the timeline
  QAction* launch_action_ = nullptr;
  QAction* simulate_action_ = nullptr;
  bool launch_simulates_ = false;  // the pending launch (first listing) is a simulation
  QAction* stop_action_ = nullptr;
  QLabel* read_only_label_ = nullptr;  // why the store is read-only (a full disk), kept in view
  int64_t live_run_id_ = 0;            // last launched run; 0 before its start is known
  int64_t shown_run_id_ = 0;  // run on the live page; -1: a launch whose id is not known yet
  int64_t loading_run_id_ = 0;
  bool first_listing_ = true;
  bool launch_pending_ = false;  // launch() came before the store was first read
  bool launch_shows_monitor_ = true;
  static constexpr int kLivePreviewMs = 500;  // the runs page redraws a live run's chart so often
  QElapsedTimer preview_clock_ = [] {
    QElapsedTimer clock;
    clock.start();
    return clock;
  }();
};

}  // namespace ranklab
