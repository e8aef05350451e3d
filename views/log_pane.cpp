#include "views/log_pane.h"

#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QListView>
#include <QScrollBar>
#include <QSortFilterProxyModel>
#include <QVBoxLayout>

#include "views/models/log_model.h"

namespace ranklab {

LogPane::LogPane(LogModel* model, QWidget* parent)
    : QWidget(parent),
      model_(model),
      proxy_(new QSortFilterProxyModel(this)),
      rank_filter_(new QComboBox(this)),
      view_(new QListView(this)) {
  proxy_->setSourceModel(model_);
  proxy_->setFilterRole(LogModel::RankRole);

  rank_filter_->setObjectName(QStringLiteral("logRankFilter"));
  rank_filter_->addItem(tr("all ranks"), QVariant());
  connect(model_, &LogModel::rankSeen, this, &LogPane::addRank);
  connect(model_, &QAbstractItemModel::modelReset, this, [this] {
    while (rank_filter_->count() > 1) rank_filter_->removeItem(1);
  });
  connect(rank_filter_, &QComboBox::currentIndexChanged, this, [this](int index) {
    const QVariant rank = rank_filter_->itemData(index);
    proxy_->setFilterRegularExpression(rank.isValid() ? QStringLiteral("^%1$").arg(rank.toInt())
                                                      : QString());
  });

  view_->setObjectName(QStringLiteral("runLog"));
  view_->setModel(proxy_);
  view_->setUniformItemSizes(true);  // thousands of lines stay cheap to lay out
  view_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  view_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  // Follow new lines while the view is at the bottom; stay put when scrolled up to read.
  connect(proxy_, &QAbstractItemModel::rowsInserted, this, [this] {
    QScrollBar* bar = view_->verticalScrollBar();
    if (bar->value() >= bar->maximum() - 2) view_->scrollToBottom();
  });

  auto* top = new QHBoxLayout;
  top->setContentsMargins(0, 0, 0, 0);
  top->addWidget(new QLabel(tr("Output of"), this));
  top->addWidget(rank_filter_);
  top->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(top);
  layout->addWidget(view_, 1);
}

void LogPane::addRank(int rank) {
  // Items after "all ranks" stay in rank order, mpirun (-1) first.
  int at = 1;
  while (at < rank_filter_->count() && rank_filter_->itemData(at).toInt() < rank) ++at;
  rank_filter_->insertItem(at, rank < 0 ? tr("mpirun") : tr("rank %1").arg(rank), rank);
}

void LogPane::showRank(int rank) {
  const int index = rank_filter_->findData(rank);
  if (index >= 0) rank_filter_->setCurrentIndex(index);
}

void LogPane::showAll() {
  rank_filter_->setCurrentIndex(0);
}

int LogPane::visibleLines() const {
  return proxy_->rowCount();
}

}  // namespace ranklab
