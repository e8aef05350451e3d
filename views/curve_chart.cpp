#include "views/curve_chart.h"

#include <QAreaSeries>
#include <QChart>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLocale>
#include <QPainter>
#include <QPen>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

#include "views/chart_style.h"
#include "views/models/rank_colour.h"

namespace ranklab {

namespace {

// Takes off `chart`, and deletes, each series in `shown` whose key none of `items` has
// (curves and bands alike: what a set call no longer names goes).
template <typename Series, typename Item>
void removeUnwanted(QChart* chart, std::map<int, Series*>& shown, const std::vector<Item>& items) {
  std::map<int, bool> wanted;
  for (const Item& item : items) wanted[item.key] = true;
  for (auto it = shown.begin(); it != shown.end();) {
    if (wanted.count(it->first)) {
      ++it;
      continue;
    }
    chart->removeSeries(it->second);
    delete it->second;
    it = shown.erase(it);
  }
}

}  // namespace

CurveChart::CurveChart(const QString& title, const QString& y_title, QWidget* parent)
    : QChartView(parent), x_axis_(new QValueAxis), y_axis_(new QValueAxis) {
  auto* chart = new QChart;
  styleChart(chart, title);
  styleAxis(x_axis_, tr("step"));
  styleAxis(y_axis_, y_title);
  chart->addAxis(x_axis_, Qt::AlignBottom);
  chart->addAxis(y_axis_, Qt::AlignLeft);
  setChart(chart);
  setRenderHint(QPainter::Antialiasing);
  setMinimumHeight(200);
  fitAxis(x_axis_, 0, 10, 6, true);
  fitAxis(y_axis_, 0, 1);
}

void CurveChart::setMarks(std::vector<ChartMark> marks) {
  marks_ = std::move(marks);
  scene()->update();  // the foreground is drawn from marks_
}

// Over the curves: each mark a dashed line from the plot's top to its bottom, its label
// beside the top, a row lower where an earlier label is still there (three rows at most).
void CurveChart::drawForeground(QPainter* painter, const QRectF& rect) {
  QChartView::drawForeground(painter, rect);
  if (marks_.empty()) return;
  const QRectF plot = chart()->plotArea();
  painter->save();
  painter->setClipRect(plot);
  QFont font = painter->font();
  font.setPointSize(8);
  painter->setFont(font);
  const double line_height = painter->fontMetrics().height();
  double row_end[3] = {-1e9, -1e9, -1e9};  // where each row's last label ends
  for (const ChartMark& mark : marks_) {
    if (mark.x < x_axis_->min() || mark.x > x_axis_->max()) continue;
    const double x = chart()->mapToPosition(QPointF(mark.x, y_axis_->min())).x();
    painter->setPen(QPen(mark.colour, 1.2, Qt::DashLine));
    painter->drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()));
    if (mark.label.isEmpty()) continue;
    for (int row = 0; row < 3; ++row) {
      if (x < row_end[row]) continue;
      painter->drawText(QPointF(x + 3, plot.top() + line_height * (row + 1) - 2), mark.label);
      row_end[row] = x + 6 + painter->fontMetrics().horizontalAdvance(mark.label);
      break;
    }
  }
  painter->restore();
}

void CurveChart::setXTitle(const QString& title) {
  x_axis_->setTitleText(title);
}

void CurveChart::setYTitle(const QString& title) {
  y_axis_->setTitleText(title);
}

QLineSeries* CurveChart::seriesFor(int key) const {
  auto it = series_.find(key);
  return it == series_.end() ? nullptr : it->second;
}

QLineSeries* CurveChart::seriesFor(const Curve& curve) {
  if (QLineSeries* existing = seriesFor(curve.key)) {
    // A chart may change what a key is (a run of another kind shown): its name follows.
    if (existing->name() != curve.name) existing->setName(curve.name);
    return existing;
  }
  auto* series = new QLineSeries;
  series->setName(curve.name);
  QPen pen(curve.colour);
  pen.setWidthF(curve.width);
  // Thin lines are cosmetic: the raster engine draws them without the (slow) stroker.
  if (curve.width <= 1.0) pen.setCosmetic(true);
  if (curve.dashed) pen.setStyle(Qt::DashLine);
  series->setPen(pen);
  series->setPointsVisible(curve.markers);
  series_[curve.key] = series;
  legend_stale_ = true;  // added to the chart by addInKeyOrder, with the others new
  return series;
}

// The legend lists series in the order they were added: every series re-added by key, once
// for all the new ones (once per new series, 32 new curves cost 500 re-adds: 150 ms).
void CurveChart::addInKeyOrder() {
  for (auto& [key, s] : series_)
    if (s->chart()) chart()->removeSeries(s);
  for (auto& [key, s] : series_) {
    chart()->addSeries(s);
    s->attachAxis(x_axis_);
    s->attachAxis(y_axis_);
  }
}

QAreaSeries* CurveChart::bandFor(int key) const {
  auto it = bands_.find(key);
  return it == bands_.end() ? nullptr : it->second;
}

// A band's area owns its two lines; new bands are added before the curves re-add
// themselves (addInKeyOrder), so they lie beneath them.
void CurveChart::setBands(const std::vector<Band>& bands) {
  removeUnwanted(chart(), bands_, bands);
  band_extent_.clear();
  for (const Band& b : bands) {
    QAreaSeries* area = bandFor(b.key);
    if (!area) {
      auto* upper = new QLineSeries;
      auto* lower = new QLineSeries;
      area = new QAreaSeries(upper, lower);
      upper->setParent(area);
      lower->setParent(area);
      area->setColor(b.colour);
      area->setPen(Qt::NoPen);
      chart()->addSeries(area);
      area->attachAxis(x_axis_);
      area->attachAxis(y_axis_);
      bands_[b.key] = area;
      legend_stale_ = true;  // the curves go back on top
    }
    if (area->name() != b.name) area->setName(b.name);
    area->upperSeries()->replace(b.upper);
    area->lowerSeries()->replace(b.lower);
    for (const QList<QPointF>* line : {&b.lower, &b.upper})
      band_extent_.insert(band_extent_.end(), line->begin(), line->end());
  }
}

void CurveChart::setCurves(const std::vector<Curve>& curves, bool y_floor_zero) {
  removeUnwanted(chart(), series_, curves);
  for (const Curve& c : curves) {
    QLineSeries* series = seriesFor(c);
    series->replace(c.points);  // one signal, one repaint, however many points
  }
  // Hidden after every re-add: the legend builds a fresh marker per series.
  if (legend_stale_) {
    addInKeyOrder();
    for (const Curve& c : curves)
      for (QLegendMarker* marker : chart()->legend()->markers(seriesFor(c.key)))
        marker->setVisible(c.in_legend);
    legend_stale_ = false;
  }
  fitAxes(curves, y_floor_zero);
}

void CurveChart::fitAxes(const std::vector<Curve>& curves, bool y_floor_zero) {
  double x_lo = 0, x_hi = 0, y_lo = 0, y_hi = 0;
  bool any = false;
  const auto include = [&](const QPointF& p) {
    if (!any) {
      x_lo = x_hi = p.x();
      y_lo = y_hi = p.y();
      any = true;
    }
    x_lo = std::min(x_lo, p.x());
    x_hi = std::max(x_hi, p.x());
    y_lo = std::min(y_lo, p.y());
    y_hi = std::max(y_hi, p.y());
  };
  for (const Curve& curve : curves)
    for (const QPointF& p : curve.points) include(p);
  for (const QPointF& p : band_extent_) include(p);
  if (!any) {
    fitAxis(x_axis_, 0, 10, 6, true);
    fitAxis(y_axis_, 0, 1);
    return;
  }
  fitAxis(x_axis_, std::min(0.0, x_lo), std::max(x_hi, x_lo + 1e-9), 6, x_hi - x_lo >= 10);
  // A flat curve (a constant loss scale, one evaluation) gets a range of ±5 % around it.
  const double span = std::max(y_hi - y_lo, std::max(1e-6, std::abs(y_hi) * 0.1));
  if (y_hi - y_lo < span) {
    const double middle = 0.5 * (y_hi + y_lo);
    y_lo = middle - 0.5 * span;
    y_hi = middle + 0.5 * span;
  }
  double low = y_lo - 0.05 * span;
  if (y_floor_zero && y_lo >= 0) low = std::max(0.0, low);
  fitAxis(y_axis_, low, y_hi + 0.05 * span);
}

std::vector<const RankSeries*> ranksToDraw(const RunSeries& run) {
  const std::vector<RankSeries>& ranks = run.ranks();
  std::vector<const RankSeries*> drawn;
  if (ranks.size() <= size_t(kMaxRankCurves)) {
    for (const RankSeries& r : ranks) drawn.push_back(&r);
    return drawn;
  }
  const int straggler = run.rowOfRank(run.stragglerRank());
  const size_t spread = size_t(kMaxRankCurves) - (straggler >= 0 ? 1 : 0);
  for (size_t i = 0; i < spread; ++i) {
    const size_t row = i * (ranks.size() - 1) / std::max<size_t>(1, spread - 1);
    if (int(row) != straggler) drawn.push_back(&ranks[row]);
  }
  if (straggler >= 0) drawn.push_back(&ranks[size_t(straggler)]);
  std::sort(drawn.begin(), drawn.end(),
            [](const RankSeries* a, const RankSeries* b) { return a->rank < b->rank; });
  return drawn;
}

QString rankCurvesNote(const RunSeries& run) {
  if (run.ranks().size() <= size_t(kMaxRankCurves)) return {};
  return CurveChart::tr(" · %1 of %2 ranks drawn, the mean of all")
      .arg(ranksToDraw(run).size())
      .arg(QLocale().toString(qlonglong(run.ranks().size())));
}

std::vector<Curve> lossCurves(const RunSeries& run, XAxis x, double smoothing, int budget) {
  std::vector<Curve> curves;
  for (const RankSeries* drawn : ranksToDraw(run)) {
    const RankSeries& r = *drawn;
    QList<QPointF> points = curvePoints(r.series, Metric::Loss, x, smoothing, budget);
    if (points.isEmpty()) continue;  // a parameter server trains nothing: no legend entry
    curves.push_back({r.rank, CurveChart::tr("rank %1").arg(r.rank), rankColour(r.rank), 1.0, false,
                      false, true, std::move(points)});
  }
  if (!run.global().empty())
    curves.push_back({kMeanKey, CurveChart::tr("mean of ranks"), Qt::black, 2.6, false, false, true,
                      curvePoints(run.global(), Metric::Loss, x, smoothing, budget)});
  return curves;
}

}  // namespace ranklab
