// The run's output, one line per row, coloured by rank (stderr tinted), filtered by rank.
#pragma once

#include <QWidget>

class QComboBox;
class QListView;
class QSortFilterProxyModel;

namespace ranklab {

class LogModel;

class LogPane : public QWidget {
  Q_OBJECT

 public:
  explicit LogPane(LogModel* model, QWidget* parent = nullptr);

  void showRank(int rank);  // only this rank's lines; showAll() undoes it
  void showAll();
  int visibleLines() const;

 private:
  void addRank(int rank);

  LogModel* model_;
  QSortFilterProxyModel* proxy_;
  QComboBox* rank_filter_;
  QListView* view_;
};

}  // namespace ranklab
