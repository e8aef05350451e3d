#include "views/analysis_page.h"

#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <span>

#include "views/load_progress.h"
#include "views/rank_breakdown_chart.h"

namespace ranklab {

namespace {

QTableWidget* table(const QStringList& headers, QWidget* parent) {
  auto* t = new QTableWidget(0, int(headers.size()), parent);
  t->setHorizontalHeaderLabels(headers);
  t->verticalHeader()->hide();
  t->setEditTriggers(QAbstractItemView::NoEditTriggers);
  t->setSelectionMode(QAbstractItemView::NoSelection);
  t->horizontalHeader()->setStretchLastSection(true);
  t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  return t;
}

// A row of texts; numbers are right-aligned.
void addRow(QTableWidget* t, const QStringList& cells) {
  const int row = t->rowCount();
  t->insertRow(row);
  for (int c = 0; c < cells.size(); ++c) {
    auto* item = new QTableWidgetItem(cells[c]);
    bool number = false;
    cells[c].toDouble(&number);
    if (number || cells[c].endsWith(QLatin1Char('%')))
      item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    t->setItem(row, c, item);
  }
}

QString who(int rank) {
  return rank < 0 ? QObject::tr("all ranks") : QObject::tr("rank %1").arg(rank);
}

QLabel* heading(const QString& text, QWidget* parent) {
  auto* label = new QLabel(QStringLiteral("<b>%1</b>").arg(text), parent);
  return label;
}

}  // namespace

AnalysisPage::AnalysisPage(QWidget* parent)
    : QWidget(parent),
      title_(new QLabel(tr("Open a run to see where its ranks' time went"), this)),
      progress_(new LoadProgress(this)),
      breakdown_(new RankBreakdownChart(this)),
      path_(table({tr("share"), tr("who"), tr("phase")}, this)),
      what_if_(new QLabel(this)),
      collectives_(table(
          {tr("collective"), tr("count"), tr("transfer s"), tr("wait s"), tr("busbw GB/s")}, this)),
      stragglers_(
          table({tr("rank"), tr("arrived last"), tr("others' wait for it (rank-s)")}, this)),
      notes_(new QLabel(this)) {
  setObjectName(QStringLiteral("analysis"));
  QFont title_font = title_->font();
  title_font.setPointSizeF(title_font.pointSizeF() * 1.2);
  title_font.setBold(true);
  title_->setFont(title_font);
  what_if_->setWordWrap(true);
  notes_->setWordWrap(true);
  breakdown_->setMinimumHeight(380);

  auto* grid = new QGridLayout;
  grid->addWidget(breakdown_, 0, 0, 3, 1);
  grid->addWidget(heading(tr("Critical path across ranks"), this), 0, 1);
  grid->addWidget(path_, 1, 1);
  grid->addWidget(what_if_, 2, 1);
  grid->addWidget(heading(tr("Collectives: waiting for the last rank against moving bytes"), this),
                  3, 0);
  grid->addWidget(collectives_, 4, 0);
  grid->addWidget(heading(tr("Stragglers"), this), 3, 1);
  grid->addWidget(stragglers_, 4, 1);
  grid->setColumnStretch(0, 3);
  grid->setColumnStretch(1, 2);
  grid->setRowStretch(1, 2);
  grid->setRowStretch(4, 1);

  progress_->setObjectName(QStringLiteral("analysisProgress"));
  auto* top = new QHBoxLayout;
  top->addWidget(title_, 1);
  top->addWidget(progress_);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  layout->addLayout(grid, 1);
  layout->addWidget(notes_);

  live_timer_.setInterval(kLiveIntervalMs);
  connect(&live_timer_, &QTimer::timeout, this, [this] {
    if (isVisible() && live_) request();
  });
}

void AnalysisPage::setRun(int64_t run_id, const QString& label, bool live) {
  const bool changed = run_id != run_id_;
  run_id_ = run_id;
  live_ = live;
  title_->setText(label);
  if (live)
    live_timer_.start();
  else
    live_timer_.stop();
  if (changed && isVisible()) request();
}

void AnalysisPage::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  request();
}

void AnalysisPage::request() {
  if (run_id_ <= 0) return;
  progress_->start();  // busy: the analysis tells no fraction
  emit analysisRequested(run_id_);
}

void AnalysisPage::setFailed() {
  progress_->finish();
}

bool AnalysisPage::loading() const {
  return progress_->loading();
}

void AnalysisPage::setAnalysis(qint64 run_id, const RunAnalysis& analysis) {
  if (run_id != run_id_) return;  // an answer for a run no longer shown
  progress_->finish();
  breakdown_->setBreakdown(analysis.breakdown);
  fillPath(analysis);
  fillCollectives(analysis);
  QStringList notes;
  for (const std::string& n : analysis.notes) notes << QString::fromStdString(n);
  if (breakdown_->ranksPerBar() > 1)
    notes << tr("%1 ranks drawn as bars of neighbouring ranks' means, as many as the chart "
                "has room to name")
                 .arg(analysis.breakdown.size());
  if (analysis.stragglers.size() > size_t(kMaxStragglerRows))
    notes << tr("the %1 worst of %2 stragglers listed (ranklab analyze --json lists all)")
                 .arg(kMaxStragglerRows)
                 .arg(analysis.stragglers.size());
  notes_->setText(notes.isEmpty() ? QString()
                                  : tr("Note: %1").arg(notes.join(QStringLiteral("; "))));
}

void AnalysisPage::fillPath(const RunAnalysis& analysis) {
  const CriticalPath& p = analysis.critical_path;
  path_->setRowCount(0);
  for (const PathShare& s : p.shares)
    if (s.share >= 0.005)
      addRow(path_, {QString::number(100 * s.share, 'f', 1) + QLatin1Char('%'), who(s.rank),
                     QString::fromStdString(s.phase)});
  if (p.steps == 0) {
    what_if_->clear();
    return;
  }
  QString text = tr("%1 steps: the path is %2 s (their span on the clock %3 s).")
                     .arg(p.steps)
                     .arg(p.path_s, 0, 'f', 3)
                     .arg(p.span_s, 0, 'f', 3);
  if (p.what_if_rank >= 0)
    text += tr(" Had rank %1 computed as fast as the median rank: %2 s (%3 % less).")
                .arg(p.what_if_rank)
                .arg(p.what_if_s, 0, 'f', 3)
                .arg(p.path_s > 0 ? 100 * (1 - p.what_if_s / p.path_s) : 0.0, 0, 'f', 1);
  what_if_->setText(text);
}

void AnalysisPage::fillCollectives(const RunAnalysis& analysis) {
  collectives_->setRowCount(0);
  for (const CollectiveStats& c : analysis.collectives)
    addRow(collectives_,
           {QString::fromStdString(c.kind), QString::number(c.count),
            QString::number(c.transfer_s, 'f', 3), QString::number(c.wait_s, 'f', 3),
            c.bus_bytes > 0 ? QString::number(c.busbw_gbps, 'f', 2) : tr("not recorded")});
  stragglers_->setRowCount(0);
  const size_t listed = std::min(analysis.stragglers.size(), size_t(kMaxStragglerRows));
  for (const StragglerStats& s : std::span(analysis.stragglers).first(listed))
    addRow(stragglers_, {QString::number(s.rank), QString::number(s.last_arrivals),
                         QString::number(s.caused_wait_s, 'f', 3)});
}

}  // namespace ranklab
