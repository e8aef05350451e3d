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

TimeBreakdownChart::TimeBreakdownChart(QWidget* parent)
    : QChartView(parent),
      series_(new QHorizontalStackedBarSeries),
      rank_axis_(new QBarCategoryAxis),
      ms_axis_(new QValueAxis) {
  auto* chart = new QChart;
  styleChart(chart, tr("Time per step by phase"));
  for (int p = 0; p < kPhaseCount; ++p) {
    auto* set = new QBarSet(QString::fromLatin1(phaseName(p)));
    set->setColor(phaseColour(p));
    set->setBorderColor(phaseColour(p).darker(115));
    sets_[size_t(p)] = set;
    series_->append(set);
  }
  series_->setBarWidth(0.7);
  chart->addSeries(series_);
  styleAxis(rank_axis_, QString());
  styleAxis(ms_axis_, tr("ms per step"));
  chart->addAxis(rank_axis_, Qt::AlignLeft);
  chart->addAxis(ms_axis_, Qt::AlignBottom);
  series_->attachAxis(rank_axis_);
  series_->attachAxis(ms_axis_);
  setChart(chart);
  setRenderHint(QPainter::Antialiasing);
  setMinimumHeight(200);
  clear();
}

void TimeBreakdownChart::clear() {
  for (QBarSet* set : sets_) set->remove(0, set->count());
  rank_axis_->clear();
  ranks_.clear();
  fitAxis(ms_axis_, 0, 1);
}

void TimeBreakdownChart::refresh(const LiveRunModel& model) {
  const RunSeries& run = model.series();
  chart()->setTitle(
      run.finished()
          ? tr("Time per step by phase (mean over the run)")
          : tr("Time per step by phase (mean of the last %1 steps)").arg(RunSeries::kRecentSteps));
  std::vector<int> ranks;
  for (int row = 0; row < model.rankCount(); ++row) ranks.push_back(model.rankAt(row).rank);
  if (ranks != ranks_) {
    // A rank appeared: rebuild the categories and bars (rare: once per rank per run).
    for (QBarSet* set : sets_) set->remove(0, set->count());
    // Bars are drawn bottom-up; list the ranks in reverse so rank 0 is on top.
    QStringList names;
    for (auto r = ranks.rbegin(); r != ranks.rend(); ++r) names << tr("rank %1").arg(*r);
    rank_axis_->clear();
    rank_axis_->append(names);
    for (QBarSet* set : sets_)
      for (size_t i = 0; i < ranks.size(); ++i) set->append(0.0);
    ranks_ = ranks;
  }
  double longest = 0;
  const int n = model.rankCount();
  for (int row = 0; row < n; ++row) {
    const auto ms = run.phaseMeansMs(row);
    const int bar = barOfRow(row, n);
    double total = 0;
    for (int p = 0; p < kPhaseCount; ++p) {
      sets_[size_t(p)]->replace(bar, ms[size_t(p)]);
      total += ms[size_t(p)];
    }
    longest = std::max(longest, total);
  }
  fitAxis(ms_axis_, 0, longest > 0 ? longest : 1.0);
}

}  // namespace ranklab
