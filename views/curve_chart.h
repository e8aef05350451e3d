// A line chart of curves that are replaced wholesale on each redraw (each holds at most a
// bounded number of points, see SampleSeries). Curves are keyed, so a redraw only moves
// points; a curve appears in the legend unless told otherwise. Axes follow the data.
#pragma once

#include <QChartView>
#include <QColor>
#include <QList>
#include <QPointF>
#include <algorithm>
#include <map>
#include <vector>

#include "views/models/run_series.h"

class QAreaSeries;
class QLineSeries;
class QValueAxis;

namespace ranklab {

struct Curve {
  int key = 0;  // stable across redraws, e.g. the rank
  QString name;
  QColor colour;
  double width = 1.6;
  bool dashed = false;
  bool markers = false;  // draw the points themselves (sparse curves)
  bool in_legend = true;
  QList<QPointF> points;
};

// A shaded area between two lines (the spread of a metric across ranks), under the curves.
struct Band {
  int key = 0;
  QString name;
  QColor colour;  // its fill; give it some transparency
  QList<QPointF> lower, upper;
};

// A vertical line across the plot at x, labelled at its top (an event of the run).
struct ChartMark {
  double x = 0;
  QColor colour;
  QString label;  // "" draws the line alone
};

class CurveChart : public QChartView {
  Q_OBJECT

 public:
  CurveChart(const QString& title, const QString& y_title, QWidget* parent = nullptr);

  void setTitle(const QString& title) { chart()->setTitle(title); }
  void setXTitle(const QString& title);
  void setYTitle(const QString& title);
  // Every curve not given is removed; y_floor_zero keeps 0 in sight for non-negative data.
  void setCurves(const std::vector<Curve>& curves, bool y_floor_zero = true);
  // Bands replacing the earlier ones; call before setCurves, which fits the axes to both.
  void setBands(const std::vector<Band>& bands);
  int bandCount() const { return int(bands_.size()); }
  QAreaSeries* bandFor(int key) const;  // nullptr when absent
  void clear() {
    setBands({});
    setCurves({});
    setMarks({});
  }
  // Marks drawn over the curves, replacing the earlier ones; those outside the x range are
  // left out.
  void setMarks(std::vector<ChartMark> marks);
  const std::vector<ChartMark>& marks() const { return marks_; }

  int seriesCount() const { return int(series_.size()); }
  // Points worth drawing per curve: one every four pixels (Qt Charts strokes every point).
  int pointBudget() const { return std::max(100, width() / 4); }
  QLineSeries* seriesFor(int key) const;  // nullptr when absent

 protected:
  void drawForeground(QPainter* painter, const QRectF& rect) override;

 private:
  QLineSeries* seriesFor(const Curve& curve);  // a new one is not on the chart yet
  void addInKeyOrder();
  void fitAxes(const std::vector<Curve>& curves, bool y_floor_zero);

  QValueAxis* x_axis_;
  QValueAxis* y_axis_;
  std::map<int, QLineSeries*> series_;
  std::map<int, QAreaSeries*> bands_;
  std::vector<QPointF> band_extent_;  // the bands' points, for fitAxes
  bool legend_stale_ = false;         // a series was added: its legend marker is new
  std::vector<ChartMark> marks_;
};

// The ranks a chart draws a curve for: every rank up to kMaxRankCurves, else that many
// spread evenly from the first to the last, the straggler among them (Qt Charts slows to
// a halt with a thousand series, and no one reads a thousand lines).
constexpr int kMaxRankCurves = 16;
std::vector<const RankSeries*> ranksToDraw(const RunSeries& run);
// " · 16 of 1,000 ranks drawn, the mean of all" when ranks were left out, else "".
QString rankCurvesNote(const RunSeries& run);

// The loss of the ranks drawn (thin, rank colours) and the mean of all (bold black, key
// kMeanKey).
constexpr int kMeanKey = -1;
std::vector<Curve> lossCurves(const RunSeries& run, XAxis x, double smoothing, int budget);

}  // namespace ranklab
