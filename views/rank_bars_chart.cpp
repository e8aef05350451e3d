#include "views/rank_bars_chart.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QHorizontalStackedBarSeries>
#include <QValueAxis>
#include <algorithm>

#include "views/chart_style.h"

namespace ranklab {

RankBarsChart::RankBarsChart(const QString& title, const QString& unit,
                             const std::vector<Part>& parts, QWidget* parent)
    : QChartView(parent),
      series_(new QHorizontalStackedBarSeries),
      rank_axis_(new QBarCategoryAxis),
      value_axis_(new QValueAxis) {
  auto* chart = new QChart;
  styleChart(chart, title);
  setParts(parts);
  series_->setBarWidth(0.7);
  chart->addSeries(series_);
  styleAxis(rank_axis_, QString());
  styleAxis(value_axis_, unit);
  chart->addAxis(rank_axis_, Qt::AlignLeft);
  chart->addAxis(value_axis_, Qt::AlignBottom);
  series_->attachAxis(rank_axis_);
  series_->attachAxis(value_axis_);
  setChart(chart);
  setRenderHint(QPainter::Antialiasing);
  setMinimumHeight(200);
  clear();
}

void RankBarsChart::setParts(const std::vector<Part>& parts) {
  for (QBarSet* set : sets_) series_->remove(set);  // deletes it
  sets_.clear();
  for (const Part& part : parts) {
    auto* set = new QBarSet(part.name);
    set->setColor(part.colour);
    set->setBorderColor(part.colour.darker(115));
    sets_.push_back(set);
    series_->append(set);
  }
  ranks_.clear();  // the next setBars() lays the bars out again
  names_.clear();
}

void RankBarsChart::clear() {
  for (QBarSet* set : sets_) set->remove(0, set->count());
  rank_axis_->clear();
  ranks_.clear();
  names_.clear();
  fitAxis(value_axis_, 0, 1);
}

void RankBarsChart::setBars(const std::vector<int>& ranks,
                            const std::vector<std::vector<double>>& values,
                            const QStringList& names) {
  if (ranks != ranks_ || names != names_) {
    // A rank appeared: rebuild the categories and bars (rare: once per rank per run).
    for (QBarSet* set : sets_) set->remove(0, set->count());
    // Bars are drawn bottom-up; list the ranks in reverse so rank 0 is on top.
    QStringList bottom_up;
    for (size_t i = ranks.size(); i-- > 0;)
      bottom_up << (i < size_t(names.size()) ? names[qsizetype(i)] : tr("rank %1").arg(ranks[i]));
    rank_axis_->clear();
    rank_axis_->append(bottom_up);
    for (QBarSet* set : sets_)
      for (size_t i = 0; i < ranks.size(); ++i) set->append(0.0);
    ranks_ = ranks;
    names_ = names;
  }
  double longest = 0;
  const int n = int(values.size());
  for (int row = 0; row < n; ++row) {
    const int bar = barOfRow(row, n);
    double total = 0;
    for (size_t p = 0; p < sets_.size(); ++p) {
      sets_[p]->replace(bar, values[size_t(row)][p]);
      total += values[size_t(row)][p];
    }
    longest = std::max(longest, total);
  }
  fitAxis(value_axis_, 0, longest > 0 ? longest : 1.0);
}

}  // namespace ranklab
