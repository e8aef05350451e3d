#include "views/live_page.h"

#include <cmath>
#include <map>

#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QSlider>
#include <QSplitter>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>
#include <cmath>

#include "views/activations_chart.h"
#include "views/chart_export.h"
#include "views/chart_style.h"
#include "views/curve_chart.h"
#include "views/log_pane.h"
#include "views/memory_chart.h"
#include "views/models/workbench_settings.h"
#include "views/rank_heat_map.h"
#include "views/shard_chart.h"
#include "views/spread_curves.h"
#include "views/stuck_panel.h"
#include "views/time_breakdown_chart.h"

namespace ranklab {

LivePage::LivePage(LogModel* log, QWidget* parent)
    : QWidget(parent),
      status_(new QLabel(this)),
      charts_(new QWidget(this)),
      loss_(new CurveChart(tr("Training loss (cross-entropy)"), tr("loss"), charts_)),
      accuracy_(new CurveChart(tr("Test accuracy at each evaluation"), tr("accuracy %"), charts_)),
      time_(new TimeBreakdownChart(charts_)),
      memory_(new MemoryChart(charts_)),
      activations_(new ActivationsChart(charts_)),
      shards_(new ShardChart(charts_)),
      bandwidth_(new CurveChart(tr("Bandwidth per rank (solid: sent, dashed: received)"),
                                tr("MB/s"), charts_)),
      step_time_(new CurveChart(tr("Time per step"), tr("ms"), charts_)),
      wait_(new CurveChart(tr("Waiting for other ranks"), tr("ms"), charts_)),
      scale_(new CurveChart(tr("AMP loss scale"), tr("scale"), charts_)),
      staleness_(new CurveChart(tr("Staleness per rank: server updates between pull and push"),
                                tr("versions behind"), charts_)),
      norm_(new CurveChart(tr("Gradient norm (before clipping)"), tr("norm"), charts_)),
      lr_(new CurveChart(tr("Learning rate"), tr("rate"), charts_)),
      heat_map_(new RankHeatMap(charts_)),
      stuck_(new StuckPanel(this)),
      grid_(new QTableView(this)),
      log_pane_(new LogPane(log, this)) {
  x_axis_ = XAxis(std::clamp(WorkbenchSettings::xAxis(), 0, 2));
  smoothing_ = WorkbenchSettings::smoothing();

  status_->setObjectName(QStringLiteral("runStatus"));
  status_->setTextFormat(Qt::RichText);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  status_->setWordWrap(true);  // a long line must wrap, not widen the window
  status_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  QFont font = status_->font();
  font.setPointSize(11);
  status_->setFont(font);
  status_->setContentsMargins(6, 4, 6, 4);

  layOutCharts();

  grid_->setObjectName(QStringLiteral("rankGrid"));
  grid_->verticalHeader()->hide();
  grid_->setSelectionMode(QAbstractItemView::SingleSelection);  // a rank chosen elsewhere
  grid_->setSelectionBehavior(QAbstractItemView::SelectRows);
  grid_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  // Widths from the rows around the view, not from each of 1,000 ranks' on every change.
  grid_->horizontalHeader()->setResizeContentsPrecision(kGridRowsMeasured);
  grid_->horizontalHeader()->setStretchLastSection(true);
  grid_->verticalHeader()->setDefaultSectionSize(22);
  grid_->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(grid_, &QTableView::customContextMenuRequested, this, &LivePage::showRankMenu);

  auto* bottom = new QSplitter(Qt::Horizontal, this);
  bottom->addWidget(grid_);
  bottom->addWidget(log_pane_);
  bottom->setStretchFactor(0, 3);
  bottom->setStretchFactor(1, 2);

  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(charts_);
  split->addWidget(bottom);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  bottom->setMinimumHeight(150);  // the grid shows 4 ranks without scrolling

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(status_);
  layout->addWidget(buildControls());
  layout->addWidget(stuck_);
  layout->addWidget(split, 1);
  connect(heat_map_, &RankHeatMap::rankChosen, this, &LivePage::showRank);
  connect(stuck_, &StuckPanel::rankChosen, this, &LivePage::showRank);

  redraw_timer_.setSingleShot(true);
  redraw_timer_.setInterval(kRedrawIntervalMs);
  connect(&redraw_timer_, &QTimer::timeout, this, &LivePage::drawNextGroup);
  updateStatus();
}

// The charts in a grid, two abreast; those a run may not use hidden until it does.
void LivePage::layOutCharts() {
  auto* charts = new QGridLayout(charts_);
  charts->setContentsMargins(0, 0, 0, 0);
  charts->setSpacing(4);
  charts->addWidget(loss_, 0, 0);
  charts->addWidget(accuracy_, 0, 1);
  charts->addWidget(step_time_, 1, 0);  // many ranks: before the bars of rank groups
  charts->addWidget(wait_, 1, 1);
  charts->addWidget(heat_map_, 2, 0, 1, 2);  // many ranks: the whole width, a column a step
  charts->addWidget(time_, 3, 0);
  charts->addWidget(bandwidth_, 3, 1);
  charts->addWidget(memory_, 4, 0);
  charts->addWidget(scale_, 4, 1);
  charts->addWidget(shards_, 5, 0, 1, 2);  // the whole width: its bars' names are long
  charts->addWidget(staleness_, 6, 0, 1, 2);
  charts->addWidget(norm_, 7, 0);
  charts->addWidget(lr_, 7, 1);
  charts->addWidget(activations_, 8, 0, 1, 2);  // the whole width: a bar per rank, many layers
  charts->setRowStretch(2, 2);     // the heat-map: a pixel row per rank or few, as tall as it gets
  charts->setColumnStretch(0, 1);  // a chart hidden leaves its half empty, not the other wide
  charts->setColumnStretch(1, 1);
  step_time_->hide();
  wait_->hide();
  heat_map_->hide();
  activations_->hide();
  scale_->hide();
  shards_->hide();
  staleness_->hide();
  norm_->hide();
  lr_->hide();
}

QWidget* LivePage::buildControls() {
  auto* bar = new QWidget(this);
  auto* row = new QHBoxLayout(bar);
  row->setContentsMargins(6, 0, 6, 0);
  x_choice_ = new QComboBox(bar);
  x_choice_->setObjectName(QStringLiteral("xAxis"));
  x_choice_->addItems({tr("step"), tr("wall time (s)"), tr("MB sent")});
  x_choice_->setCurrentIndex(int(x_axis_));
  connect(x_choice_, &QComboBox::currentIndexChanged, this,
          [this](int index) { setXAxis(XAxis(index)); });
  smoothing_slider_ = new QSlider(Qt::Horizontal, bar);
  smoothing_slider_->setObjectName(QStringLiteral("smoothing"));
  smoothing_slider_->setRange(0, 99);
  smoothing_slider_->setValue(int(smoothing_ * 100 + 0.5));
  smoothing_slider_->setMaximumWidth(220);
  smoothing_label_ = new QLabel(bar);
  smoothing_label_->setMinimumWidth(36);
  smoothing_label_->setText(QString::number(smoothing_, 'f', 2));
  connect(smoothing_slider_, &QSlider::valueChanged, this,
          [this](int value) { setSmoothing(value / 100.0); });
  row->addWidget(new QLabel(tr("x axis:"), bar));
  row->addWidget(x_choice_);
  row->addSpacing(20);
  row->addWidget(new QLabel(tr("smoothing (debiased EMA of loss and bandwidth):"), bar));
  row->addWidget(smoothing_slider_);
  row->addWidget(smoothing_label_);
  row->addStretch(1);
  auto* export_button = new QToolButton(bar);
  export_button->setObjectName(QStringLiteral("exportChart"));
  export_button->setText(tr("Export chart…"));
  export_button->setPopupMode(QToolButton::InstantPopup);
  auto* menu = new QMenu(export_button);
  const std::pair<QWidget*, QString> charts[] = {{loss_, tr("Training loss")},
                                                 {accuracy_, tr("Test accuracy")},
                                                 {time_, tr("Time per step by phase")},
                                                 {bandwidth_, tr("Bandwidth")},
                                                 {step_time_, tr("Time per step")},
                                                 {wait_, tr("Waiting")},
                                                 {memory_, tr("Memory per rank")},
                                                 {scale_, tr("Loss scale")},
                                                 {shards_, tr("Parameter server shards")},
                                                 {staleness_, tr("Staleness")},
                                                 {norm_, tr("Gradient norm")},
                                                 {lr_, tr("Learning rate")}};
  for (const auto& [chart, name] : charts) {
    menu->addAction(name, this, [this, chart = chart, name = name] {
      const QString path = QFileDialog::getSaveFileName(
          this, tr("Export %1").arg(name), QDir::home().filePath(name + QStringLiteral(".png")),
          tr("PNG image (*.png);;SVG drawing (*.svg)"));
      if (path.isEmpty()) return;
      const QString error = exportChart(chart, path);
      if (!error.isEmpty()) QMessageBox::warning(this, tr("Export chart"), error);
    });
  }
  export_button->setMenu(menu);
  row->addWidget(export_button);
  return bar;
}

// Fault injection on a running rank: the launcher sends the signal and records the fault.
void LivePage::showRankMenu(const QPoint& at) {
  const QModelIndex index = grid_->indexAt(at);
  if (!faults_enabled_ || !model_ || model_->series().finished() || !index.isValid()) return;
  const int rank = model_->rankAt(index.row()).rank;
  QMenu menu(grid_);
  const struct {
    QString action, text;
  } choices[] = {{QStringLiteral("kill"), tr("Kill rank %1 (SIGKILL)")},
                 {QStringLiteral("stop"), tr("Stop rank %1 (SIGSTOP: hangs it)")},
                 {QStringLiteral("continue"), tr("Continue rank %1 (SIGCONT)")},
                 {QStringLiteral("slow"), tr("Slow rank %1 down (+20 ms every step)")}};
  for (const auto& choice : choices)
    menu.addAction(choice.text.arg(rank), this,
                   [this, rank, action = choice.action] { requestFault(rank, action); });
  menu.exec(grid_->viewport()->mapToGlobal(at));
}

void LivePage::setModel(LiveRunModel* model) {
  if (model_ == model) return;
  disconnect(updated_connection_);
  model_ = model;
  grid_->setModel(model);
  for (CurveChart* chart : {loss_, accuracy_, bandwidth_, step_time_, wait_, scale_, staleness_})
    chart->clear();
  time_->clear();
  memory_->clear();
  shards_->clear();
  heat_map_->clear();
  stuck_->clear();
  if (model_)
    updated_connection_ = connect(model_, &LiveRunModel::updated, this, &LivePage::scheduleRedraw);
  refreshNow();
}

void LivePage::showRank(int rank) {
  if (!model_) return;
  const int row = model_->rowOfRank(rank);
  if (row < 0) return;
  grid_->selectRow(row);
  grid_->scrollTo(model_->index(row, 0), QAbstractItemView::PositionAtCenter);
}

void LivePage::setHeadline(const QString& headline) {
  headline_ = headline;
  updateStatus();
}

void LivePage::setXAxis(XAxis axis) {
  x_axis_ = axis;
  if (x_choice_->currentIndex() != int(axis)) x_choice_->setCurrentIndex(int(axis));
  WorkbenchSettings::setXAxis(int(axis));
  refreshNow();
}

void LivePage::setSmoothing(double weight) {
  smoothing_ = std::clamp(weight, 0.0, 0.99);
  const int value = int(smoothing_ * 100 + 0.5);
  if (smoothing_slider_->value() != value) smoothing_slider_->setValue(value);
  smoothing_label_->setText(QString::number(smoothing_, 'f', 2));
  WorkbenchSettings::setSmoothing(smoothing_);
  refreshNow();
}

void LivePage::scheduleRedraw() {
  ++generation_;
  // Coalesce: the first change starts the clock, the rest ride along.
  if (!redraw_timer_.isActive()) redraw_timer_.start();
}

void LivePage::drawNextGroup() {
  updateStatus();
  if (!isVisible()) {
    dirty_ = true;
    return;
  }
  for (int i = 0; i < kGroupCount; ++i) {
    const int group = (next_group_ + i) % kGroupCount;
    if (drawn_[group] == generation_) continue;
    drawCharts(group);
    next_group_ = (group + 1) % kGroupCount;
    if (!pace_clock_.isValid()) pace_clock_.start();
    redraw_timer_.setInterval(
        pacer_.nextIntervalMs(threadCpuSeconds(), double(pace_clock_.nsecsElapsed()) / 1e9));
    break;
  }
  for (quint64 drawn : drawn_)
    if (drawn != generation_) redraw_timer_.start();  // a group is still behind
}

void LivePage::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (dirty_) refreshNow();
}

void LivePage::refreshNow() {
  redraw_timer_.stop();
  updateStatus();
  if (!isVisible()) {
    dirty_ = true;  // nobody sees the charts: draw them when the page shows
    return;
  }
  dirty_ = false;
  drawCharts(-1);
}

QString LivePage::xTitle() const {
  switch (x_axis_) {
    case XAxis::Step:
      return tr("step");
    case XAxis::WallTime:
      return tr("wall time (s since the rank started)");
    case XAxis::MegabytesSent:
      return tr("MB sent by the rank");
  }
  return {};
}

// The run's events at their steps on the chosen x axis, in step order, the kinds of one step
// in one label ("fault · failure") where there are few; many (a long fp16 run's overflows)
// stay unlabelled lines.
std::vector<ChartMark> LivePage::eventMarks(const RunSeries& run) const {
  std::map<int64_t, QStringList> kinds;  // by step
  for (const ChartEvent& e : run.events()) {
    QStringList& at = kinds[e.step];
    const QString kind = QString::fromStdString(e.kind);
    if (!at.contains(kind)) at << kind;
  }
  std::vector<ChartMark> marks;
  const bool labelled = kinds.size() <= 12;
  for (const auto& [step, at] : kinds) {
    const double x = run.stepX(step, x_axis_);
    if (std::isnan(x)) continue;
    marks.push_back({x, eventColour(at.front()), labelled ? at.join(QStringLiteral(" · ")) : ""});
  }
  return marks;
}

void LivePage::drawCharts(int group) {
  for (CurveChart* chart : {loss_, accuracy_, bandwidth_, step_time_, wait_, scale_, staleness_})
    chart->setXTitle(xTitle());
  for (int g = 0; g < kGroupCount; ++g)
    if (group < 0 || group == g) drawn_[g] = generation_;
  if (!model_) return;
  const bool all = group < 0;
  const RunSeries& run = model_->series();
  const std::vector<ChartMark> marks = eventMarks(run);  // the same on every chart
  // A run without a loss (a simulated one) draws no chart pretending one.
  const bool no_loss = !run.hasLoss() && !run.global().empty();
  loss_->setVisible(!no_loss);
  accuracy_->setVisible(!no_loss || !run.evals().empty());
  step_time_->setVisible(run.manyRanks());
  wait_->setVisible(run.manyRanks());
  if (run.manyRanks())
    drawSpreads(run, group);
  else
    drawPerRank(run, group);
  if (all || group == LossGroup) loss_->setMarks(marks);
  if (all || group == SpreadGroup)
    for (CurveChart* chart : {step_time_, wait_}) chart->setMarks(marks);
  if (all || group == HeatMapGroup) {
    heat_map_->setVisible(run.manyRanks());
    if (run.manyRanks()) heat_map_->refresh(run);
  }
  if (!all && group != OtherGroup) return;

  drawEvaluations(run, marks);
  time_->refresh(*model_);
  memory_->refresh(*model_);
  activations_->setVisible(activations_->refresh(*model_));
  shards_->setVisible(!run.shards().empty());
  if (!run.shards().empty()) shards_->refresh(*model_);

  scale_->setVisible(run.usesLossScale());
  if (run.usesLossScale()) {
    scale_->setCurves(
        {{0, tr("loss scale (smallest of the ranks)"), QColor(0x6a, 0x3d, 0x9a), 2.0, false, false,
          true, curvePoints(run.global(), Metric::LossScale, x_axis_, 0)}});
    scale_->setMarks(marks);
  }
  staleness_->setVisible(run.usesStaleness());
  refreshRates(run, marks);
}

void LivePage::drawPerRank(const RunSeries& run, int group) {
  const bool all = group < 0;
  std::vector<Curve> bandwidth, staleness;
  const int budget = loss_->pointBudget();  // the charts share one width
  for (const RankSeries* drawn : ranksToDraw(run)) {
    const RankSeries& r = *drawn;
    const QColor colour = rankColour(r.rank);
    const QString name = tr("rank %1").arg(r.rank);
    bandwidth.push_back({r.rank, name, colour, 1.0, false, false, true,
                         curvePoints(r.series, Metric::SentMBps, x_axis_, smoothing_, budget)});
    bandwidth.push_back({kReceivedKeyOffset + r.rank, name, colour, 1.0, true, false, false,
                         curvePoints(r.series, Metric::ReceivedMBps, x_axis_, smoothing_, budget)});
    if (run.usesStaleness())
      staleness.push_back({r.rank, name, colour, 1.4, false, false, true,
                           curvePoints(r.series, Metric::Staleness, x_axis_, 0, budget)});
  }
  if (all || group == LossGroup) {
    loss_->setTitle(tr("Training loss (cross-entropy)") + rankCurvesNote(run));
    loss_->setBands({});
    loss_->setCurves(lossCurves(run, x_axis_, smoothing_, budget));
  }
  if (all || group == BandwidthGroup) {
    bandwidth_->setTitle(tr("Bandwidth per rank (solid: sent, dashed: received)"));
    bandwidth_->setBands({});
    bandwidth_->setCurves(bandwidth);
  }
  if ((all || group == OtherGroup) && run.usesStaleness()) staleness_->setCurves(staleness);
}

// Each chart: the spread across ranks per step, its median and the worst ranks' own lines.
void LivePage::drawSpreads(const RunSeries& run, int group) {
  const bool all = group < 0;
  const int budget = loss_->pointBudget();
  const auto draw = [&](CurveChart* chart, const QString& title, const QString& worst,
                        const SpreadView& view) {
    chart->setTitle(title + spreadNote(run, worst));
    chart->setBands(spreadBands(run, view, x_axis_, budget));
    chart->setCurves(spreadCurves(run, view, x_axis_, budget));
  };
  const QColor blue(0x1f, 0x5f, 0x99), orange(0xd9, 0x6a, 0x0b), red(0xb0, 0x24, 0x18),
      green(0x1b, 0x7a, 0x3a);
  if ((all || group == LossGroup) && run.hasLoss())
    draw(loss_, tr("Training loss"), tr("highest"),
         {SpreadMetric::Loss, Metric::Loss, false, blue, std::nullopt});
  if (all || group == BandwidthGroup)
    draw(bandwidth_, tr("Bandwidth sent"), tr("slowest"),
         {SpreadMetric::SentMBps, Metric::SentMBps, true, green, std::nullopt});
  if (!all && group != SpreadGroup) return;
  // The slowest: those working longest, the time they did not wait (a straggler waits least).
  draw(step_time_, tr("Time per step"), tr("slowest"),
       {SpreadMetric::StepMs, Metric::StepMs, false, orange, Metric::BusyMs});
  draw(wait_, tr("Waiting for others"), tr("waiting most"),
       {SpreadMetric::WaitMs, Metric::WaitMs, false, red, std::nullopt});
}

// Test accuracy at each evaluation; for a language model (a text run, which records its
// bigram baseline) its validation loss in nats per token, with the bigram model's as a
// dashed line: the bar it must pass.
void LivePage::drawEvaluations(const RunSeries& run, const std::vector<ChartMark>& marks) {
  const double baseline = run.bigramBaseline();
  const bool language = !std::isnan(baseline);
  accuracy_->setTitle(language ? tr("Validation loss at each evaluation (nats per token)")
                               : tr("Test accuracy at each evaluation"));
  accuracy_->setYTitle(language ? tr("loss") : tr("accuracy %"));
  Curve scores{0,
               language ? tr("validation loss") : tr("test accuracy"),
               QColor(0x1b, 0x7a, 0x3a),
               2.2,
               false,
               true,
               true,
               {}};
  double first_x = 0, last_x = 0;
  for (const EvalPoint& e : run.evals()) {
    const double x = x_axis_ == XAxis::Step       ? e.step
                     : x_axis_ == XAxis::WallTime ? e.time_s
                                                  : e.sent_mb;
    if (scores.points.isEmpty()) first_x = x;
    last_x = x;
    scores.points.append(QPointF(x, language ? e.loss : e.accuracy * 100.0));
  }
  std::vector<Curve> curves{scores};
  if (language && !scores.points.isEmpty()) {
    curves.push_back({1,
                      tr("bigram model (%1)").arg(baseline, 0, 'f', 3),
                      QColor(0x80, 0x80, 0x80),
                      1.4,
                      true,
                      false,
                      true,
                      {QPointF(first_x, baseline), QPointF(last_x, baseline)}});
  }
  accuracy_->setCurves(curves, false);
  accuracy_->setMarks(marks);
}

// Every training rank measures the same norm and rate: the first rank's curves.
void LivePage::refreshRates(const RunSeries& run, const std::vector<ChartMark>& marks) {
  const bool norms = run.usesGradNorm() && !run.ranks().empty();
  norm_->setVisible(norms);
  if (norms) {
    norm_->setCurves({{0, tr("gradient norm"), QColor(0xb1, 0x59, 0x28), 1.6, false, false, true,
                       curvePoints(run.ranks().front().series, Metric::GradNorm, x_axis_,
                                   smoothing_, norm_->pointBudget())}});
    norm_->setMarks(marks);
  }
  const bool rates = run.changesLr() && !run.ranks().empty();
  lr_->setVisible(rates);
  if (rates) {
    lr_->setCurves({{0, tr("learning rate"), QColor(0x1f, 0x5f, 0x99), 2.0, false, false, true,
                     curvePoints(run.ranks().front().series, Metric::LearningRate, x_axis_, 0,
                                 lr_->pointBudget())}});
  }
}

QString LivePage::statusText() const {
  return status_plain_;
}

void LivePage::updateStatus() {
  QStringList parts;  // plain text, one fact each
  if (model_ && model_->latestStep() >= 0) {
    parts << tr("epoch %1").arg(model_->latestEpoch());
    parts << tr("step %1").arg(model_->latestStep());
    parts << lossText();
    // A language model's speed is counted in tokens, as nanoGPT and Megatron print it.
    const int tokens = model_->series().tokensPerSample();
    if (tokens > 1)
      parts << tr("%1 tokens/s").arg(model_->samplesPerSecond() * tokens, 0, 'f', 0);
    else
      parts << tr("%1 samples/s").arg(model_->samplesPerSecond(), 0, 'f', 0);
  }
  const double baseline = model_ ? model_->series().bigramBaseline() : 0;
  if (model_ && model_->latestEval() && !std::isnan(baseline)) {
    parts << tr("validation loss %1 (bigram model %2)")
                 .arg(model_->latestEval()->loss, 0, 'f', 4)
                 .arg(baseline, 0, 'f', 4);
  } else if (model_ && model_->latestEval()) {
    parts << tr("test accuracy %1 %").arg(model_->latestEval()->accuracy * 100.0, 0, 'f', 1);
  }
  if (headline_.isEmpty() && parts.isEmpty())
    parts << tr("No run shown. Launch a job, or open a run on the Runs page.");

  QStringList html;
  if (!headline_.isEmpty()) html << QStringLiteral("<b>%1</b>").arg(headline_.toHtmlEscaped());
  // Wrap between the facts, never inside one ("loss" apart from its value).
  for (const QString& part : parts)
    html << part.toHtmlEscaped().replace(QLatin1Char(' '), QStringLiteral("&nbsp;"));
  QString text = html.join(QStringLiteral(" &nbsp;·&nbsp; "));
  QString straggler;
  if (model_ && model_->series().stragglerRank() >= 0) {
    straggler = tr("straggler: %1").arg(QString::fromStdString(model_->series().stragglerReason()));
    text += QStringLiteral("<br><span style='color:#b35900'><b>⚠ %1</b></span>")
                .arg(straggler.toHtmlEscaped());
  }
  QString stuck;
  if (model_) {
    stuck_->refresh(model_->series());  // with the status: a silent rank sends no steps
    if (stuck_->report().any())
      stuck = tr("stuck: %1").arg(QString::fromStdString(stuckHeadline(stuck_->report())));
  }
  if (!stuck.isEmpty())
    text += QStringLiteral("<br><span style='color:#8b0000'><b>⚠ %1</b></span>")
                .arg(stuck.toHtmlEscaped());
  const QString last = lastArrivalText();
  if (!last.isEmpty())
    text += QStringLiteral("<br><span style='color:#7a4a00'>%1</span>").arg(last.toHtmlEscaped());
  QString lost;
  if (const int64_t n = model_ ? model_->series().lostMessages() : 0; n > 0) {
    lost = tr("telemetry lost: %1 messages never arrived; their steps are missing").arg(n);
    text += QStringLiteral("<br><span style='color:#b00020'><b>⚠ %1</b></span>")
                .arg(lost.toHtmlEscaped());
  }
  status_->setText(text);

  if (!headline_.isEmpty()) parts.prepend(headline_);
  if (!straggler.isEmpty()) parts << straggler;
  if (!stuck.isEmpty()) parts << stuck;
  if (!last.isEmpty()) parts << last;
  if (!lost.isEmpty()) parts << lost;
  status_plain_ = parts.join(QStringLiteral(" · "));
}

// The latest loss; a run without one says so rather than show 0.
QString LivePage::lossText() const {
  const RunSeries& run = model_->series();
  if (run.hasLoss()) return tr("loss %1").arg(model_->latestLoss(), 0, 'f', 4);
  return run.simulated() ? tr("no loss (simulated)") : tr("no finite loss yet");
}

// Many ranks: the rank last to arrive most often of late, with its share of the steps.
QString LivePage::lastArrivalText() const {
  if (!model_ || !model_->series().manyRanks()) return {};
  const RunSeries& run = model_->series();
  const auto [rank, times] = run.mostOftenLast();
  if (rank < 0) return {};
  return tr("last to arrive most often: rank %1, in %2 of the last %3 steps (%4 %)")
      .arg(rank)
      .arg(times)
      .arg(run.arrivalSteps())
      .arg(100 * times / std::max(1, run.arrivalSteps()));
}

}  // namespace ranklab
