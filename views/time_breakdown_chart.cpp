#include "views/time_breakdown_chart.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QHorizontalStackedBarSeries>
#include <QValueAxis>
#include <algorithm>

#include "views/chart_style.h"
#include "views/models/live_run_model.h"

namespace ranklab {

namespace {

QBarSet* makeSet(const QString& label, const QColor& colour) {
  auto* set = new QBarSet(label);
  set->setColor(colour);
  set->setBorderColor(colour.darker(115));
  set->setLabelColor(Qt::black);
  return set;
}

}  // namespace

TimeBreakdownChart::TimeBreakdownChart(QWidget* parent)
    : QChartView(parent),
      series_(new QHorizontalStackedBarSeries),
      compute_(makeSet(tr("compute"), QColor(0x4c, 0x78, 0xa8))),
      comm_(makeSet(tr("communication"), QColor(0xf5, 0x85, 0x18))),
      wait_(makeSet(tr("wait"), QColor(0xe4, 0x57, 0x56))),
      rank_axis_(new QBarCategoryAxis),
      seconds_axis_(new QValueAxis) {
  auto* chart = new QChart;
  styleChart(chart, tr("Time per rank (cumulative)"));
  series_->append(compute_);
  series_->append(comm_);
  series_->append(wait_);
  series_->setBarWidth(0.6);
  chart->addSeries(series_);
  styleAxis(rank_axis_, QString());
  styleAxis(seconds_axis_, tr("seconds"));
  chart->addAxis(rank_axis_, Qt::AlignLeft);
  chart->addAxis(seconds_axis_, Qt::AlignBottom);
  series_->attachAxis(rank_axis_);
  series_->attachAxis(seconds_axis_);
  setChart(chart);
  setRenderHint(QPainter::Antialiasing);
  setMinimumHeight(160);
  clear();
}

void TimeBreakdownChart::clear() {
  for (QBarSet* set : {compute_, comm_, wait_}) set->remove(0, set->count());
  rank_axis_->clear();
  ranks_.clear();
  fitAxis(seconds_axis_, 0, 1);
}

void TimeBreakdownChart::refresh(const LiveRunModel& model) {
  std::vector<int> ranks;
  for (int row = 0; row < model.rankCount(); ++row) ranks.push_back(model.rankAt(row).rank);
  if (ranks != ranks_) {
    // A rank appeared: rebuild the categories and bars (rare: once per rank per run).
    for (QBarSet* set : {compute_, comm_, wait_}) set->remove(0, set->count());
    // Bars are drawn bottom-up; list the ranks in reverse so rank 0 is on top.
    QStringList names;
    for (auto r = ranks.rbegin(); r != ranks.rend(); ++r) names << tr("rank %1").arg(*r);
    rank_axis_->clear();
    rank_axis_->append(names);
    for (QBarSet* set : {compute_, comm_, wait_})
      for (size_t i = 0; i < ranks.size(); ++i) set->append(0.0);
    ranks_ = ranks;
  }
  double longest = 0;
  const int n = model.rankCount();
  for (int row = 0; row < n; ++row) {
    const RankProgress& p = model.rankAt(row);
    const int bar = barOfRow(row, n);
    compute_->replace(bar, p.compute_s);
    comm_->replace(bar, p.comm_s);
    wait_->replace(bar, p.wait_s);
    longest = std::max(longest, p.compute_s + p.comm_s + p.wait_s);
  }
  fitAxis(seconds_axis_, 0, longest > 0 ? longest : 1.0);
}

}  // namespace ranklab
