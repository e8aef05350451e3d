#include "views/rank_bars_chart.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QFontMetrics>
#include <QHorizontalStackedBarSeries>
#include <QResizeEvent>
#include <QTimer>
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

namespace {

// Rows first..last-1 as one bar: their mean of each part, named for the first and last.
struct Group {
  int rank = 0;
  QString name;
  std::vector<double> values;
};

std::vector<Group> groupRows(const std::vector<int>& ranks,
                             const std::vector<std::vector<double>>& values,
                             const QStringList& names, int per_bar) {
  const auto nameOf = [&](size_t i) {
    return i < size_t(names.size()) ? names[qsizetype(i)]
                                    : RankBarsChart::tr("rank %1").arg(ranks[i]);
  };
  std::vector<Group> groups;
  for (size_t first = 0; first < ranks.size(); first += size_t(per_bar)) {
    const size_t last = std::min(ranks.size(), first + size_t(per_bar));
    Group g{ranks[first], nameOf(first), {}};
    if (last - first > 1)
      g.name = RankBarsChart::tr("ranks %1–%2 (mean)").arg(ranks[first]).arg(ranks[last - 1]);
    for (size_t row = first; row < last && row < values.size(); ++row) {
      g.values.resize(std::max(g.values.size(), values[row].size()));
      for (size_t p = 0; p < values[row].size(); ++p)
        g.values[p] += values[row][p] / double(last - first);
    }
    groups.push_back(std::move(g));
  }
  return groups;
}

}  // namespace

// The categories and bars for these groups' names (rebuilt when a rank appeared: rare).
void RankBarsChart::layOut(const std::vector<int>& ranks, const QStringList& names) {
  if (ranks == ranks_ && names == names_) return;
  // Bars are drawn bottom-up; list the ranks in reverse so rank 0 is on top.
  QStringList bottom_up;
  for (qsizetype i = names.size(); i-- > 0;) bottom_up << names[i];
  rank_axis_->clear();
  rank_axis_->append(bottom_up);
  const QList<qreal> zeros(qsizetype(ranks.size()), 0.0);
  for (QBarSet* set : sets_) {
    set->remove(0, set->count());
    set->append(zeros);  // one change, not one per bar
  }
  ranks_ = ranks;
  names_ = names;
}

void RankBarsChart::setBars(const std::vector<int>& ranks,
                            const std::vector<std::vector<double>>& values,
                            const QStringList& names) {
  const int room = int(ranks.size()) > kMaxBars ? groupsThatFit() : kMaxBars;
  ranks_per_bar_ = std::max<int>(1, int((ranks.size() + size_t(room) - 1) / size_t(room)));
  if (ranks_per_bar_ > 1) {
    grouped_input_ = {ranks, values, names};
    grouped_for_ = room;
  } else {
    grouped_input_ = {};
  }
  const std::vector<Group> groups = groupRows(ranks, values, names, ranks_per_bar_);
  std::vector<int> firsts;
  QStringList group_names;
  for (const Group& g : groups) {
    firsts.push_back(g.rank);
    group_names << g.name;
  }
  layOut(firsts, group_names);
  double longest = 0;
  const int n = int(groups.size());
  for (int row = 0; row < n; ++row) {
    const int bar = barOfRow(row, n);
    double total = 0;
    for (size_t p = 0; p < sets_.size() && p < groups[size_t(row)].values.size(); ++p) {
      sets_[p]->replace(bar, groups[size_t(row)].values[p]);
      total += groups[size_t(row)].values[p];
    }
    longest = std::max(longest, total);
  }
  fitAxis(value_axis_, 0, longest > 0 ? longest : 1.0);
}

int RankBarsChart::groupsThatFit() const {
  const qreal plot = chart()->plotArea().height();
  if (plot <= 0) return kMaxBars;  // not laid out yet: a resize groups again
  const qreal band = 1.6 * QFontMetrics(rank_axis_->labelsFont()).height();  // with Qt's margins
  return std::clamp(int(plot / band), kMinGroups, kMaxBars);
}

void RankBarsChart::resizeEvent(QResizeEvent* event) {
  QChartView::resizeEvent(event);
  if (grouped_input_.ranks.empty()) return;
  // The plot area follows the chart's layout, after this event.
  QTimer::singleShot(0, this, [this] {
    if (grouped_input_.ranks.empty() || groupsThatFit() == grouped_for_) return;
    const Input input = grouped_input_;
    setBars(input.ranks, input.values, input.names);
  });
}

}  // namespace ranklab
