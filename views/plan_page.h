// The Plan page: every layout of the setup form's job on N ranks, predicted by `ranklab plan`
// (run in a process of its own, its progress shown as it calibrates), in a sortable table
// with each candidate's peak memory as a bar against the limit and what dominates its step.
// "Simulate" stores the chosen layout's simulated run and opens it like any run; "Run this
// layout" sets the form to it and launches it.
#pragma once

#include <QElapsedTimer>
#include <QWidget>

#include "views/job_command.h"

class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSortFilterProxyModel;
class QSpinBox;
class QTableView;

namespace ranklab {

class JobDraft;
class PlanTableModel;

class PlanPage : public QWidget {
  Q_OBJECT

 public:
  // `draft`: the setup form's job, which outlives the page.
  PlanPage(const JobDraft& draft, JobCommandOptions options, QWidget* parent = nullptr);

  void plan();              // the form's job on ranksBox() ranks
  void planOn(int ranks);   // the same on `ranks`, which the box keeps
  void simulateSelected();  // the selected candidate, stored as a simulated run
  void runSelected();       // asks the window to launch the selected candidate
  void setDbPath(const QString& path) { command_->setDbPath(path); }
  bool isBusy() const { return command_->isRunning(); }

  PlanTableModel* model() const { return model_; }
  QSortFilterProxyModel* proxy() const { return proxy_; }
  QTableView* view() const { return view_; }
  QSpinBox* ranksBox() const { return ranks_; }
  QLineEdit* memoryEdit() const { return memory_; }
  QLineEdit* calibrationEdit() const { return calibration_; }
  QLabel* statusLabel() const { return status_; }
  QPlainTextEdit* logView() const { return log_; }

 signals:
  void planFinished(const QString& error);                // "" when the table shows the plan
  void simulated(qint64 run_id);                          // stored; the window opens it
  void runLayoutRequested(const QStringList& overrides);  // "section.key=value" each

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  QWidget* buildControls();
  QWidget* buildActions();
  void takeFormRanks();
  QStringList calibrationArgs() const;
  bool startCommand(const QString& verb, const QStringList& args, const QString& status);
  void onCommandFinished(const QByteArray& output, const QString& error);
  void showPlan(const QByteArray& output);
  void showSimulated(const QByteArray& output);
  void updateActions();
  int selectedRow() const;  // in the model; -1 when none
  void appendLog(const QString& line);

  const JobDraft& draft_;
  JobCommand* command_;
  PlanTableModel* model_;
  QSortFilterProxyModel* proxy_;
  QTableView* view_;
  QSpinBox* ranks_ = nullptr;
  QLineEdit* memory_ = nullptr;
  QLineEdit* calibration_ = nullptr;
  QPushButton* plan_button_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QPushButton* simulate_ = nullptr;
  QPushButton* run_ = nullptr;
  QLabel* status_;
  QPlainTextEdit* log_;
  QElapsedTimer clock_;        // since the command started
  QString verb_;               // of the command going: "plan" or "simulate"
  bool ranks_chosen_ = false;  // the user set the ranks: the form's no longer replace them
};

}  // namespace ranklab
