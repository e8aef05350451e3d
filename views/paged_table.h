// A PagedRowsModel in a table view, with the page's buttons ("rows 51-100 of 1,024"), sorting
// by a click on a column's header and a field that finds a rank's row. The buttons hide while
// every row fits one page.
#pragma once

#include <QWidget>

class QLabel;
class QLineEdit;
class QTableView;
class QToolButton;

namespace ranklab {

class PagedRowsModel;

class PagedTable : public QWidget {
  Q_OBJECT

 public:
  // rank_column: the column "find rank" searches (-1: no such field).
  PagedTable(PagedRowsModel* model, int rank_column, QWidget* parent = nullptr);

  PagedRowsModel* model() const { return model_; }
  QTableView* view() const { return view_; }
  // Turns to the rank's page and selects its row; false when no row holds it.
  bool findRank(int rank);
  QString pageText() const;

 private:
  void pageChanged();

  PagedRowsModel* model_;
  int rank_column_;
  QTableView* view_;
  QWidget* bar_;
  QToolButton* previous_;
  QToolButton* next_;
  QLabel* rows_;
  QLineEdit* find_;
};

}  // namespace ranklab
