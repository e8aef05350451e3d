// Shared set-up of the workbench's tables, so that its lists of runs and of layouts behave
// alike.
#pragma once

#include <QAbstractItemView>

class QTableView;

namespace ranklab {

// A read-only table of whole rows over `model` (a sorting proxy), sorted by a click on a
// column's header and first by `column` in `order`; striped, without row numbers.
void setUpSortedRows(QTableView* view, QAbstractItemModel* model, int column, Qt::SortOrder order,
                     QAbstractItemView::SelectionMode selection);

}  // namespace ranklab
