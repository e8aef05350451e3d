// The runs browser: every run of the store in a sortable, filterable table, the loss of the
// selected run as a chart, and what can be done to one (open, rename, tag, delete, export
// its steps as CSV or its chart as PNG/SVG) or several (compare). The page never touches
// SQLite: it asks through signals, and the window's reader answers.
#pragma once

#include <QWidget>

class QLabel;
class QLineEdit;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;

namespace ranklab {

class CurveChart;
class RunSeries;
class RunsTableModel;
struct StoredRun;

class RunsPage : public QWidget {
  Q_OBJECT

 public:
  explicit RunsPage(RunsTableModel* model, QWidget* parent = nullptr);

  QTableView* view() const { return view_; }
  QSortFilterProxyModel* proxy() const { return proxy_; }
  QLineEdit* filterEdit() const { return filter_; }
  void setDbPath(const QString& path);
  void selectRun(int64_t run_id);
  QList<int64_t> selectedRunIds() const;  // in the order shown
  int64_t currentRunId() const;           // 0 when none

  // The chart of the selected run: its loss per rank and the mean, as loaded for it.
  void showPreview(const StoredRun& run);
  void showPreview(int64_t run_id, const QString& name, const RunSeries& series);  // a live run
  CurveChart* previewChart() const { return preview_; }
  int64_t previewRunId() const { return preview_run_id_; }  // 0 when none is drawn
  QString exportPreview(const QString& path);  // PNG or SVG by suffix; "" or why it failed

 signals:
  void currentRunChanged(qint64 run_id);  // also: load its preview (0: none selected)
  void openRequested(qint64 run_id);      // double click or Open: show it on the live page
  void compareRequested(const QList<qint64>& run_ids);
  void renameRequested(qint64 run_id, const QString& name);
  void tagsRequested(qint64 run_id, const QStringList& tags);
  void deleteRequested(const QList<qint64>& run_ids);
  void exportCsvRequested(qint64 run_id, const QString& path);
  void exportTraceRequested(qint64 run_id, const QString& path);
  // Resume… : the run again from its checkpoint, on this many ranks.
  void resumeRequested(qint64 run_id, int ranks);
  void openDbRequested(const QString& path);

 private:
  QWidget* buildActions();
  void renameCurrent();
  void tagCurrent();
  void resumeCurrent();
  void deleteSelected();
  void exportCurrent();
  void exportTraceCurrent();
  void openDbDialog();
  void exportChartDialog();
  void clearPreviewIfGone();

  RunsTableModel* model_;
  QSortFilterProxyModel* proxy_;
  QTableView* view_;
  QLineEdit* filter_;
  QLabel* db_label_;
  CurveChart* preview_;
  int64_t preview_run_id_ = 0;
  QPushButton* export_chart_ = nullptr;
};

}  // namespace ranklab
