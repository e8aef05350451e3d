#include "views/timeline_page.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>

#include "views/load_progress.h"
#include "views/rank_overview.h"
#include "views/timeline_view.h"

namespace ranklab {

TimelinePage::TimelinePage(QWidget* parent)
    : QWidget(parent),
      view_(new TimelineView(this)),
      overview_(new RankOverview(this)),
      title_(new QLabel(this)),
      first_(new QSpinBox(this)),
      count_(new QSpinBox(this)),
      progress_(new LoadProgress(this)),
      status_(new QLabel(this)),
      ranks_(new QLabel(this)),
      rank_(new QSpinBox(this)),
      follow_(new QCheckBox(tr("follow the latest steps"), this)) {
  view_->setObjectName(QStringLiteral("timelineView"));
  QFont font = title_->font();
  font.setPointSize(11);
  font.setBold(true);
  title_->setFont(font);
  title_->setText(tr("No run shown: open one on the Runs page or launch a job."));

  first_->setObjectName(QStringLiteral("timelineFirst"));
  first_->setRange(0, 1'000'000'000);
  count_->setObjectName(QStringLiteral("timelineSteps"));
  count_->setRange(1, 500);
  count_->setValue(12);
  follow_->setChecked(true);
  for (QSpinBox* box : {first_, count_})
    connect(box, &QSpinBox::editingFinished, this, [this] {
      follow_->setChecked(false);  // a person chose a window: stay there
      request();
    });
  wireRankWindow();
  auto* fit = new QPushButton(tr("Fit"), this);
  connect(fit, &QPushButton::clicked, view_, &TimelineView::fit);
  connect(follow_, &QCheckBox::toggled, this, [this](bool on) {
    if (on) request();
  });
  progress_->setObjectName(QStringLiteral("timelineProgress"));
  status_->setObjectName(QStringLiteral("timelineStatus"));
  // A zoom settles before the kept window's spans are chosen again for what is in view.
  refine_timer_.setSingleShot(true);
  refine_timer_.setInterval(250);
  connect(&refine_timer_, &QTimer::timeout, this, &TimelinePage::refine);
  connect(view_, &TimelineView::viewMoved, this, [this] { refine_timer_.start(); });
  follow_timer_.setInterval(kFollowIntervalMs);
  connect(&follow_timer_, &QTimer::timeout, this, [this] {
    if (follow_->isChecked() && isVisible() && !loading()) request();  // one read at a time
  });

  auto* controls = new QHBoxLayout;
  controls->addWidget(new QLabel(tr("steps from"), this));
  controls->addWidget(first_);
  controls->addWidget(new QLabel(tr("count"), this));
  controls->addWidget(count_);
  controls->addWidget(follow_);
  controls->addWidget(fit);
  controls->addWidget(new QLabel(tr("rank"), this));
  controls->addWidget(rank_);
  controls->addStretch(1);
  controls->addWidget(new QLabel(tr("wheel: zoom · drag: pan · hover: durations"), this));

  auto* status = new QHBoxLayout;
  status->addWidget(progress_);
  status->addWidget(status_, 1);
  status->addWidget(ranks_);

  auto* plot = new QHBoxLayout;
  plot->setSpacing(2);
  plot->addWidget(view_, 1);
  plot->addWidget(overview_);
  overview_->hide();

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(title_);
  layout->addLayout(controls);
  layout->addLayout(status);
  layout->addLayout(plot, 1);
}

// The window of ranks: the rank field, the overview strip, and the view telling both.
void TimelinePage::wireRankWindow() {
  rank_->setObjectName(QStringLiteral("timelineRank"));
  rank_->setRange(0, 1 << 24);
  rank_->setToolTip(tr("Show this rank's row"));
  connect(rank_, &QSpinBox::editingFinished, this, [this] { view_->showRank(rank_->value()); });
  overview_->setObjectName(QStringLiteral("timelineOverview"));
  overview_->setContentsMargins(0, TimelineView::kLegendHeight, 0, TimelineView::kAxisHeight);
  connect(overview_, &RankOverview::rowChosen, this,
          [this](int row) { view_->setFirstRow(row - view_->rowsShown() / 2); });
  connect(view_, &TimelineView::rowsMoved, this, &TimelinePage::ranksMoved);
}

void TimelinePage::ranksMoved() {
  const int total = int(view_->data().ranks.size());
  const bool window = view_->rowsShown() < total;
  overview_->setVisible(window);
  overview_->setWindow(view_->firstRow(), view_->rowsShown());
  ranks_->setText(ranksText());
}

QString TimelinePage::ranksText() const {
  const std::vector<int>& ranks = view_->data().ranks;
  const int first = view_->firstRow(), shown = view_->rowsShown();
  if (shown >= int(ranks.size())) return {};
  const QLocale locale;
  return tr("ranks %1–%2 of %3 (Shift+wheel, or click the strip at the right)")
      .arg(locale.toString(ranks[size_t(first)]), locale.toString(ranks[size_t(first + shown - 1)]),
           locale.toString(int(ranks.size())));
}

void TimelinePage::setRun(int64_t run_id, const QString& label, bool align, int64_t latest_step,
                          bool live) {
  const bool changed = run_id != run_id_;
  run_id_ = run_id;
  align_ = align;
  live_ = live;
  latest_step_ = latest_step;
  title_->setText(label);
  if (changed) {
    requested_ = false;
    view_->setData(TimelineData{});
  }
  if (isVisible()) request();
}

void TimelinePage::setLatestStep(int64_t step) {
  latest_step_ = step;
  if (step >= 0 && !follow_timer_.isActive()) follow_timer_.start();
}

void TimelinePage::showWindow(int64_t first_step, int count) {
  follow_->setChecked(false);
  first_->setValue(int(first_step));
  count_->setValue(count);
  request();
}

void TimelinePage::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (!requested_ || follow_->isChecked()) request();
}

void TimelinePage::request() {
  if (run_id_ <= 0) return;
  requested_ = true;
  TimelineRequest r;
  r.run_id = run_id_;
  r.align = align_;
  if (follow_->isChecked() && live_) {  // the store decides what "latest" is: it may lag
    r.latest = count_->value();
  } else {
    if (follow_->isChecked() && latest_step_ >= 0)
      first_->setValue(int(std::max<int64_t>(0, latest_step_ - count_->value() + 1)));
    r.first_step = first_->value();
    r.last_step = first_->value() + count_->value() - 1;
  }
  narrowed_ = false;
  progress_->start();
  emit timelineRequested(r);
}

void TimelinePage::refine() {
  const TimelineData& shown = view_->data();
  if (shown.empty() || (!shown.spansLeftOut() && !narrowed_) || progress_->loading()) return;
  TimelineRequest r;
  r.run_id = run_id_;
  r.align = align_;
  r.first_step = shown.first_step;
  r.last_step = shown.last_step;
  r.refine = true;
  r.cap.from_ms = view_->viewBeginMs();
  r.cap.to_ms = view_->viewEndMs();
  narrowed_ = true;
  progress_->start();
  emit timelineRequested(r);
}

void TimelinePage::setProgress(qint64 run_id, int done, int of, const QString& stage) {
  if (run_id == run_id_) progress_->setStage(done, of, stage);
}

void TimelinePage::setTimeline(const TimelineRequest& request, const TimelineData& data) {
  if (request.run_id != run_id_) return;  // an answer for a run no longer shown
  progress_->finish();
  const bool same_window =
      request.refine || (view_->data().first_step == data.first_step && !view_->data().empty());
  if (!data.empty()) {
    const QSignalBlocker quiet(first_);
    first_->setValue(int(data.first_step));
  }
  status_->setText(spanCapText(data));
  overview_->setRanks(data.ranks, ownWorkMs(data));
  view_->setData(data, same_window);
  ranksMoved();
}

void TimelinePage::setFailed() {
  progress_->finish();
}

QString TimelinePage::statusText() const {
  return status_->text();
}

bool TimelinePage::loading() const {
  return progress_->loading();
}

}  // namespace ranklab
