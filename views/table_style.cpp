#include "views/table_style.h"

#include <QHeaderView>
#include <QTableView>

namespace ranklab {

void setUpSortedRows(QTableView* view, QAbstractItemModel* model, int column, Qt::SortOrder order,
                     QAbstractItemView::SelectionMode selection) {
  view->setModel(model);
  view->setSortingEnabled(true);
  view->sortByColumn(column, order);
  view->setSelectionBehavior(QAbstractItemView::SelectRows);
  view->setSelectionMode(selection);
  view->setEditTriggers(QAbstractItemView::NoEditTriggers);
  view->setAlternatingRowColors(true);
  view->verticalHeader()->hide();
}

}  // namespace ranklab
