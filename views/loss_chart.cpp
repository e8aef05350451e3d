#include "views/loss_chart.h"

#include <QChart>
#include <QLineSeries>
#include <QPen>
#include <QValueAxis>
#include <algorithm>

#include "views/chart_style.h"
#include "views/models/live_run_model.h"

namespace ranklab {

namespace {

// Steps are whole numbers: a narrower axis would label one step several times.
constexpr double kMinStepRange = 10;

}  // namespace

LossChart::LossChart(QWidget* parent)
    : QChartView(parent), x_axis_(new QValueAxis), y_axis_(new QValueAxis) {
  auto* chart = new QChart;
  styleChart(chart, tr("Training loss per rank"));
  styleAxis(x_axis_, tr("step"));
  styleAxis(y_axis_, tr("training loss"));
  chart->addAxis(x_axis_, Qt::AlignBottom);
  chart->addAxis(y_axis_, Qt::AlignLeft);
  setChart(chart);
  setRenderHint(QPainter::Antialiasing);
  setMinimumHeight(220);
  clear();
}

void LossChart::clear() {
  for (Line& line : lines_) {
    chart()->removeSeries(line.series);
    delete line.series;
  }
  lines_.clear();
  has_points_ = false;
  max_step_ = 0;
  min_loss_ = max_loss_ = 0;
  fitAxis(x_axis_, 0, kMinStepRange, 6, true);
  fitAxis(y_axis_, 0, 1);
}

QLineSeries* LossChart::seriesForRank(int rank) const {
  for (const Line& line : lines_)
    if (line.rank == rank) return line.series;
  return nullptr;
}

LossChart::Line& LossChart::lineFor(int rank) {
  auto it = std::lower_bound(lines_.begin(), lines_.end(), rank,
                             [](const Line& l, int r) { return l.rank < r; });
  if (it != lines_.end() && it->rank == rank) return *it;

  auto* series = new QLineSeries;
  series->setName(tr("rank %1").arg(rank));
  QPen pen(rankColour(rank));
  pen.setWidthF(2.0);
  series->setPen(pen);
  it = lines_.insert(it, Line{rank, series, 0});
  // The legend lists series in the order they were added: re-add the later ranks after it.
  for (auto later = it + 1; later != lines_.end(); ++later) chart()->removeSeries(later->series);
  for (auto line = it; line != lines_.end(); ++line) {
    chart()->addSeries(line->series);
    line->series->attachAxis(x_axis_);
    line->series->attachAxis(y_axis_);
  }
  return *it;
}

void LossChart::refresh(const LiveRunModel& model) {
  bool grew = false;
  for (int row = 0; row < model.rankCount(); ++row) {
    const RankProgress& progress = model.rankAt(row);
    Line& line = lineFor(progress.rank);
    const QList<QPointF>& points = progress.loss_points;
    if (line.drawn >= points.size()) continue;
    const QList<QPointF> fresh = points.mid(line.drawn);
    for (const QPointF& p : fresh) {
      if (!has_points_) {
        min_loss_ = max_loss_ = p.y();
        has_points_ = true;
      }
      min_loss_ = std::min(min_loss_, p.y());
      max_loss_ = std::max(max_loss_, p.y());
      max_step_ = std::max(max_step_, p.x());
    }
    line.series->append(fresh);
    line.drawn = points.size();
    grew = true;
  }
  if (grew) fitAxes();
}

void LossChart::fitAxes() {
  fitAxis(x_axis_, 0, std::max(kMinStepRange, max_step_), 6, true);
  const double span = std::max(max_loss_ - min_loss_, 1e-6);
  double low = min_loss_ - 0.05 * span;
  if (min_loss_ >= 0) low = std::max(0.0, low);  // a loss is not negative; keep 0 in sight
  fitAxis(y_axis_, low, max_loss_ + 0.05 * span);
}

}  // namespace ranklab
