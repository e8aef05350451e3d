#include "views/paged_table.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QIntValidator>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

#include "views/models/paged_rows.h"

namespace ranklab {

PagedTable::PagedTable(PagedRowsModel* model, int rank_column, QWidget* parent)
    : QWidget(parent),
      model_(model),
      rank_column_(rank_column),
      view_(new QTableView(this)),
      bar_(new QWidget(this)),
      previous_(new QToolButton(bar_)),
      next_(new QToolButton(bar_)),
      rows_(new QLabel(bar_)),
      find_(new QLineEdit(bar_)) {
  model_->setParent(this);
  view_->setModel(model_);
  view_->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);  // the rows' own order
  view_->setSortingEnabled(true);
  view_->horizontalHeader()->setStretchLastSection(true);
  view_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  view_->verticalHeader()->setDefaultSectionSize(view_->fontMetrics().height() + 6);
  view_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->setSelectionMode(QAbstractItemView::SingleSelection);
  previous_->setArrowType(Qt::LeftArrow);
  next_->setArrowType(Qt::RightArrow);
  previous_->setToolTip(tr("Previous page"));
  next_->setToolTip(tr("Next page"));
  find_->setPlaceholderText(tr("find rank"));
  find_->setValidator(new QIntValidator(0, 1 << 24, find_));
  find_->setMaximumWidth(find_->fontMetrics().horizontalAdvance(QStringLiteral("find rank 0000")));
  find_->setVisible(rank_column_ >= 0);

  auto* bar = new QHBoxLayout(bar_);
  bar->setContentsMargins(0, 0, 0, 0);
  bar->addWidget(previous_);
  bar->addWidget(rows_);
  bar->addWidget(next_);
  bar->addStretch(1);
  bar->addWidget(find_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(view_, 1);
  layout->addWidget(bar_);

  connect(previous_, &QToolButton::clicked, this, [this] { model_->setPage(model_->page() - 1); });
  connect(next_, &QToolButton::clicked, this, [this] { model_->setPage(model_->page() + 1); });
  connect(find_, &QLineEdit::returnPressed, this, [this] {
    if (!findRank(find_->text().toInt())) find_->selectAll();
  });
  connect(model_, &PagedRowsModel::pageChanged, this, &PagedTable::pageChanged);
  pageChanged();
}

bool PagedTable::findRank(int rank) {
  if (rank_column_ < 0) return false;
  const int row = model_->showRowWith(rank_column_, rank);
  if (row < 0) return false;
  view_->selectRow(row);
  view_->scrollTo(model_->index(row, 0));
  return true;
}

QString PagedTable::pageText() const {
  const int total = model_->totalRows();
  const int first = model_->firstRowShown();
  const QLocale locale;
  return tr("rows %1–%2 of %3")
      .arg(locale.toString(total == 0 ? 0 : first + 1), locale.toString(first + model_->rowCount()),
           locale.toString(total));
}

void PagedTable::pageChanged() {
  rows_->setText(pageText());
  previous_->setEnabled(model_->page() > 0);
  next_->setEnabled(model_->page() + 1 < model_->pages());
  bar_->setVisible(model_->pages() > 1);
}

}  // namespace ranklab
