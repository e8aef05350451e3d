#include "views/stuck_panel.h"

#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>

namespace ranklab {
namespace {

enum Column { RankCol, HostCol, StateCol, StepCol, CollectivesCol, PhaseCol, WhyCol, kColumns };

QString title(const StuckReport& r) {
  int silent = 0;
  for (const StuckRank& s : r.ranks) silent += s.silent;
  const int listed = int(r.ranks.size()) + r.more;
  QString text = silent > 0 ? QObject::tr("Stuck: %n rank(s) silent", "", silent)
                            : QObject::tr("Behind: %n rank(s)", "", listed);
  if (silent > 0 && listed > silent) text += QObject::tr(", %1 behind").arg(listed - silent);
  text += QObject::tr(" · the other %1 ranks at step %2 or near it")
              .arg(QLocale().toString(r.others))
              .arg(r.median_step);
  if (r.more > 0) text += QObject::tr(" · %1 more not listed").arg(r.more);
  return text;
}

}  // namespace

StuckPanel::StuckPanel(QWidget* parent)
    : QFrame(parent), title_(new QLabel(this)), table_(new QTableWidget(0, kColumns, this)) {
  setObjectName(QStringLiteral("stuckPanel"));
  setFrameShape(QFrame::StyledPanel);
  title_->setObjectName(QStringLiteral("stuckTitle"));
  title_->setStyleSheet(QStringLiteral("color:#8b0000; font-weight:bold; padding:2px 4px"));
  table_->setObjectName(QStringLiteral("stuckRanks"));
  table_->setHorizontalHeaderLabels({tr("rank"), tr("host"), tr("state"), tr("last step"),
                                     tr("collectives done"), tr("last doing"),
                                     tr("the launcher says")});
  table_->verticalHeader()->hide();
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->verticalHeader()->setDefaultSectionSize(20);
  connect(table_, &QTableWidget::cellClicked, this, [this](int row, int) {
    if (row >= 0 && row < int(report_.ranks.size()))
      emit rankChosen(report_.ranks[size_t(row)].rank);
  });
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->setSpacing(2);
  layout->addWidget(title_);
  layout->addWidget(table_);
  hide();
}

void StuckPanel::clear() {
  report_ = {};
  table_->setRowCount(0);
  hide();
}

void StuckPanel::refresh(const RunSeries& run) {
  report_ = stuckRanks(run);
  setVisible(report_.any());
  if (!report_.any()) return;
  title_->setText(title(report_));
  table_->setRowCount(int(report_.ranks.size()));
  // As tall as its rows, up to 6 of them: the charts keep the rest of the page.
  const int rows = std::min(6, int(report_.ranks.size()));
  table_->setFixedHeight(table_->horizontalHeader()->height() + rows * 20 + 4);
  const QLocale locale;
  for (int row = 0; row < int(report_.ranks.size()); ++row) {
    const StuckRank& s = report_.ranks[size_t(row)];
    const QString cells[kColumns] = {
        QString::number(s.rank),
        QString::fromStdString(s.host),
        s.silent ? tr("silent") : tr("behind"),
        s.last_step < 0 ? tr("none") : QString::number(s.last_step),
        s.collectives < 0 ? tr("?") : locale.toString(qlonglong(s.collectives)),
        QString::fromStdString(s.phase),
        QString::fromStdString(s.why)};
    for (int c = 0; c < kColumns; ++c) {
      auto* item = table_->item(row, c);
      if (!item) table_->setItem(row, c, item = new QTableWidgetItem);
      item->setText(cells[c]);
      item->setForeground(s.silent ? QColor(0x8b, 0, 0) : QColor(0x7a, 0x4a, 0x00));
    }
  }
}

}  // namespace ranklab
