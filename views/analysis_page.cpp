#include "views/analysis_page.h"

#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include "views/breakdown_spread_chart.h"
#include "views/load_progress.h"
#include "views/models/paged_rows.h"
#include "views/models/run_series.h"  // kManyRanks
#include "views/paged_table.h"
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

using Cell = PagedRowsModel::Cell;

PagedTable* pagedTable(const QStringList& headers, QWidget* parent) {
  return new PagedTable(new PagedRowsModel(headers), 0, parent);  // column 0: the rank
}

std::vector<std::vector<Cell>> stragglerRows(const RunAnalysis& analysis) {
  std::vector<std::vector<Cell>> rows;
  for (const StragglerStats& s : analysis.stragglers)
    if (s.last_arrivals > 0)  // a rank never last is no straggler (the Ranks tab has it)
      rows.push_back(
          {PagedRowsModel::integer(s.rank), PagedRowsModel::text(QString::fromStdString(s.kind)),
           PagedRowsModel::integer(s.last_arrivals), PagedRowsModel::percent(s.last_share),
           PagedRowsModel::percent(s.recent_share), PagedRowsModel::number(s.caused_wait_s, 3)});
  return rows;
}

std::vector<std::vector<Cell>> rankRows(const RunAnalysis& analysis) {
  std::vector<std::vector<Cell>> rows;
  for (const RankBreakdown& b : analysis.breakdown)
    rows.push_back({PagedRowsModel::integer(b.rank), PagedRowsModel::integer(b.steps),
                    PagedRowsModel::number(b.compute_s, 3), PagedRowsModel::number(b.comm_s, 3),
                    PagedRowsModel::number(b.wait_s, 3), PagedRowsModel::number(b.data_s, 3),
                    PagedRowsModel::number(b.idle_s, 3), PagedRowsModel::percent(b.overlap)});
  return rows;
}

}  // namespace

AnalysisPage::AnalysisPage(QWidget* parent)
    : QWidget(parent),
      title_(new QLabel(tr("Open a run to see where its ranks' time went"), this)),
      progress_(new LoadProgress(this)),
      breakdown_stack_(new QStackedWidget(this)),
      breakdown_(new RankBreakdownChart(breakdown_stack_)),
      spread_(new BreakdownSpreadChart(breakdown_stack_)),
      path_(table({tr("share"), tr("who"), tr("phase")}, this)),
      what_if_(new QLabel(this)),
      collectives_(table(
          {tr("collective"), tr("count"), tr("transfer s"), tr("wait s"), tr("busbw GB/s")}, this)),
      notes_(new QLabel(this)) {
  setObjectName(QStringLiteral("analysis"));
  QFont title_font = title_->font();
  title_font.setPointSizeF(title_font.pointSizeF() * 1.2);
  title_font.setBold(true);
  title_->setFont(title_font);
  what_if_->setWordWrap(true);
  notes_->setWordWrap(true);
  breakdown_stack_->addWidget(breakdown_);
  breakdown_stack_->addWidget(spread_);
  breakdown_stack_->setMinimumHeight(380);

  auto* grid = new QGridLayout;
  grid->addWidget(breakdown_stack_, 0, 0, 3, 1);
  grid->addWidget(heading(tr("Critical path across ranks"), this), 0, 1);
  grid->addWidget(path_, 1, 1);
  grid->addWidget(what_if_, 2, 1);
  grid->addWidget(heading(tr("Collectives: waiting for the last rank against moving bytes"), this),
                  3, 0);
  grid->addWidget(collectives_, 4, 0);
  grid->addWidget(buildTables(), 3, 1, 2, 1);
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
  // Not while an answer is pending: a thousand ranks' analysis takes longer than the
  // interval, and each new request would discard the last unseen (and pile up on the pool).
  connect(&live_timer_, &QTimer::timeout, this, [this] {
    if (isVisible() && live_ && !loading()) request();
  });
}

// The ranks' tables, a tab each: stragglers, every rank's time, the ranks behind.
QWidget* AnalysisPage::buildTables() {
  tables_ = new QTabWidget(this);
  stragglers_ = pagedTable({tr("rank"), tr("kind"), tr("arrived last"), tr("share"), tr("lately"),
                            tr("others' wait for it (rank-s)")},
                           tables_);
  stragglers_->setToolTip(
      tr("kind: chronic — last in most of the latest collectives; moving — last at times. "
         "share: of all collectives compared; lately: of the latest window"));
  ranks_ = pagedTable({tr("rank"), tr("steps"), tr("compute s"), tr("comm s"), tr("wait s"),
                       tr("data s"), tr("idle s"), tr("hidden comm")},
                      tables_);
  auto* behind = new QWidget(tables_);
  behind_note_ = new QLabel(behind);
  behind_note_->setWordWrap(true);
  behind_ = pagedTable(
      {tr("rank"), tr("host"), tr("last step"), tr("last collective"), tr("last seen doing")},
      behind);
  auto* behind_layout = new QVBoxLayout(behind);
  behind_layout->setContentsMargins(0, 0, 0, 0);
  behind_layout->addWidget(behind_note_);
  behind_layout->addWidget(behind_, 1);
  tables_->addTab(stragglers_, tr("Stragglers"));
  tables_->addTab(ranks_, tr("Ranks"));
  tables_->addTab(behind, tr("Behind"));
  return tables_;
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

bool AnalysisPage::showsSpread() const {
  return breakdown_stack_->currentWidget() == spread_;
}

void AnalysisPage::setAnalysis(qint64 run_id, const RunAnalysis& analysis) {
  if (run_id != run_id_) return;  // an answer for a run no longer shown
  progress_->finish();
  showBreakdown(analysis);
  fillPath(analysis);
  fillCollectives(analysis);
  fillRankTables(analysis);
  fillBehind(analysis);
  QStringList notes;
  for (const std::string& n : analysis.notes) notes << QString::fromStdString(n);
  if (breakdown_->ranksPerBar() > 1 && !showsSpread())
    notes << tr("%1 ranks drawn as bars of neighbouring ranks' means, as many as the chart "
                "has room to name")
                 .arg(analysis.breakdown.size());
  notes_->setText(notes.isEmpty() ? QString()
                                  : tr("Note: %1").arg(notes.join(QStringLiteral("; "))));
  emit analysisShown(run_id);
}

// A bar per rank for a few ranks; past kManyRanks, how their time spreads.
void AnalysisPage::showBreakdown(const RunAnalysis& analysis) {
  if (analysis.breakdown.size() > size_t(kManyRanks)) {
    breakdown_->clear();
    spread_->setBreakdown(analysis.breakdown);
    breakdown_stack_->setCurrentWidget(spread_);
  } else {
    breakdown_->setBreakdown(analysis.breakdown);
    breakdown_stack_->setCurrentWidget(breakdown_);
  }
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
}

void AnalysisPage::fillRankTables(const RunAnalysis& analysis) {
  stragglers_->model()->setRows(stragglerRows(analysis));
  ranks_->model()->setRows(rankRows(analysis));
  tables_->setTabText(StragglersTab, tr("Stragglers (%1)").arg(stragglers_->model()->totalRows()));
  tables_->setTabText(RanksTab, tr("Ranks (%1)").arg(analysis.breakdown.size()));
}

// Who held up a run that did not finish: furthest behind first. A run with ranks behind opens
// on this tab (the first time it is analysed); one that ended `done` has none.
void AnalysisPage::fillBehind(const RunAnalysis& analysis) {
  std::vector<std::vector<Cell>> rows;
  if (analysis.hang)
    for (const RankProgress& p : analysis.hang->ranks_behind)
      rows.push_back(
          {PagedRowsModel::integer(p.rank), PagedRowsModel::text(QString::fromStdString(p.host)),
           PagedRowsModel::integer(p.last_step), PagedRowsModel::integer(p.last_collective),
           PagedRowsModel::text(QString::fromStdString(p.phase))});
  const bool held_up = !rows.empty();
  behind_->model()->setRows(std::move(rows));
  tables_->setTabText(BehindTab, tr("Behind (%1)").arg(behind_->model()->totalRows()));
  tables_->setTabEnabled(BehindTab, analysis.hang.has_value());
  if (!analysis.hang) {
    behind_note_->clear();
    return;
  }
  const HangReport& h = *analysis.hang;
  QString text = tr("The run is %1; the median rank's last step is %2.")
                     .arg(QString::fromStdString(h.status))
                     .arg(h.median_last_step);
  if (!h.failure.empty()) {
    QString failure = QString::fromStdString(h.failure);
    failure[0] = failure[0].toUpper();
    text += QLatin1Char(' ') + failure;
  }
  if (!held_up) text += tr(" No rank is behind the others.");
  behind_note_->setText(text);
  // Once per run: a live run's analysis comes again every few seconds, and the tab a person
  // chose since stays chosen.
  if (held_up && behind_shown_for_ != run_id_) tables_->setCurrentIndex(BehindTab);
  if (held_up) behind_shown_for_ = run_id_;
}

}  // namespace ranklab
