#include "views/rank_heat_map.h"

#include <QComboBox>
#include <QLocale>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>
#include <vector>

#include "views/chart_style.h"

namespace ranklab {
namespace {

constexpr int kLeft = 64, kTop = 34, kBottom = 36, kRight = 84;

// With as many decimals as tell `v` apart from the other end of a scale `span` wide.
QString number(double v, double span = 0) {
  const double size = span > 0 ? span / 10 : std::fabs(v) / 100;
  const int decimals = std::clamp(int(std::ceil(-std::log10(std::max(size, 1e-9)))), 0, 4);
  return QLocale().toString(v, 'f', decimals);
}

// About `count` round ticks between first and last.
std::vector<int64_t> ticksOf(int64_t first, int64_t last, int count) {
  const double span = double(std::max<int64_t>(1, last - first));
  const double raw = span / std::max(1, count);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double unit = raw / mag < 2 ? mag : raw / mag < 5 ? 2 * mag : 5 * mag;
  const int64_t step = std::max<int64_t>(1, int64_t(unit));
  std::vector<int64_t> ticks;
  for (int64_t t = (first + step - 1) / step * step; t <= last; t += step) ticks.push_back(t);
  return ticks;
}

}  // namespace

QColor heatColour(double t) {
  // Five stops of a sequential ramp (light to dark), interpolated.
  static const QColor stops[] = {QColor(0xff, 0xf7, 0xbc), QColor(0xfe, 0xc4, 0x4f),
                                 QColor(0xf0, 0x70, 0x1c), QColor(0xc0, 0x28, 0x1e),
                                 QColor(0x5a, 0x0c, 0x1c)};
  const double x = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0) * 4;
  const int i = std::min(3, int(x));
  const double f = x - i;
  const QColor &a = stops[i], &b = stops[i + 1];
  return QColor::fromRgbF(float(a.redF() + (b.redF() - a.redF()) * f),
                          float(a.greenF() + (b.greenF() - a.greenF()) * f),
                          float(a.blueF() + (b.blueF() - a.blueF()) * f));
}

RankHeatMap::RankHeatMap(QWidget* parent)
    : QWidget(parent), metric_choice_(new QComboBox(this)), order_choice_(new QComboBox(this)) {
  setObjectName(QStringLiteral("rankHeatMap"));
  setMouseTracking(true);
  setBackgroundRole(QPalette::Base);
  setAutoFillBackground(true);
  metric_choice_->setObjectName(QStringLiteral("heatMetric"));
  for (int m = 0; m < int(HeatMetric::kCount); ++m)
    metric_choice_->addItem(tr(heatMetricName(HeatMetric(m))));
  order_choice_->setObjectName(QStringLiteral("heatOrder"));
  order_choice_->addItems({tr("ranks in order"), tr("ranks grouped by host")});
  connect(metric_choice_, &QComboBox::currentIndexChanged, this,
          [this](int index) { setMetric(HeatMetric(index)); });
  connect(order_choice_, &QComboBox::currentIndexChanged, this,
          [this](int index) { setOrder(HeatOrder(index)); });
  setToolTip(
      tr("Wheel: zoom the steps · Shift+wheel: zoom the ranks · double-click: all · "
         "click: show that rank in the grid"));
}

void RankHeatMap::refresh(const RunSeries& run) {
  run_ = &run;
  rebuild();
}

void RankHeatMap::clear() {
  run_ = nullptr;
  window_ = {};
  grid_ = {};
  image_ = {};
  chosen_rank_ = -1;
  update();
}

void RankHeatMap::setMetric(HeatMetric metric) {
  metric_ = metric;
  if (metric_choice_->currentIndex() != int(metric)) metric_choice_->setCurrentIndex(int(metric));
  rebuild();
}

void RankHeatMap::setOrder(HeatOrder order) {
  order_ = order;
  if (order_choice_->currentIndex() != int(order)) order_choice_->setCurrentIndex(int(order));
  rebuild();
}

QRect RankHeatMap::plotRect() const {
  return rect().adjusted(kLeft, kTop, -kRight, -kBottom);
}

void RankHeatMap::rebuild() {
  if (!run_) return;
  const QRect plot = plotRect();
  grid_ = buildHeatMap(*run_, metric_, order_, window_, plot.width(), plot.height());
  image_ = QImage(std::max(1, grid_.columns), std::max(1, grid_.rows), QImage::Format_RGB32);
  image_.fill(QColor(0xe8, 0xe8, 0xe8));  // no step there (yet)
  // The ramp looked up, not interpolated for each of ~300,000 cells.
  constexpr int kShades = 1024;
  static const std::vector<QRgb> shades = [] {
    std::vector<QRgb> table(kShades);
    for (int i = 0; i < kShades; ++i) table[size_t(i)] = heatColour(i / double(kShades - 1)).rgb();
    return table;
  }();
  const double span = std::max(1e-9, double(grid_.high - grid_.low));
  const bool flip = heatLowIsWorse(metric_);  // dark stays "worse"
  for (int r = 0; r < grid_.rows; ++r) {
    auto* line = reinterpret_cast<QRgb*>(image_.scanLine(r));
    for (int c = 0; c < grid_.columns; ++c) {
      const float v = grid_.at(r, c);
      if (std::isnan(v)) continue;
      const double t = std::clamp((double(v) - grid_.low) / span, 0.0, 1.0);
      line[c] = shades[size_t(std::lround((flip ? 1 - t : t) * (kShades - 1)))];
    }
  }
  update();
}

void RankHeatMap::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  const int h = metric_choice_->sizeHint().height();
  const int w_order = order_choice_->sizeHint().width();
  const int w_metric = metric_choice_->sizeHint().width();
  order_choice_->setGeometry(width() - w_order - 4, 4, w_order, h);
  metric_choice_->setGeometry(width() - w_order - w_metric - 10, 4, w_metric, h);
  rebuild();
}

bool RankHeatMap::cellAt(const QPoint& at, int& row, int& column) const {
  const QRect plot = plotRect();
  if (!plot.contains(at) || grid_.columns <= 0 || grid_.rows <= 0) return false;
  column = std::min(grid_.columns - 1, (at.x() - plot.left()) * grid_.columns / plot.width());
  row = std::min(grid_.rows - 1, (at.y() - plot.top()) * grid_.rows / plot.height());
  return true;
}

int RankHeatMap::rankAt(const QPoint& at) const {
  int row = 0, column = 0;
  return cellAt(at, row, column) ? grid_.rankAt(row, column) : -1;
}

QString RankHeatMap::describe(const QPoint& at) const {
  int row = 0, column = 0;
  if (!run_ || !cellAt(at, row, column)) return {};
  const int64_t first = grid_.columnFirstStep(column), last = grid_.columnLastStep(column);
  const QString steps =
      first == last ? tr("step %1").arg(first) : tr("steps %1–%2").arg(first).arg(last);
  const int rank = grid_.rankAt(row, column);
  const int band = grid_.rowLast(row) - grid_.rowFirst(row) + 1;
  if (rank < 0) return tr("%1: no rank reported these steps").arg(steps);
  const int index = run_->rowOfRank(rank);
  const QString host = index >= 0 ? QString::fromStdString(run_->ranks()[size_t(index)].host) : "";
  QString text = tr("rank %1").arg(rank);
  if (!host.isEmpty()) text += tr(" on %1").arg(host);
  text += QStringLiteral(" · %1 · %2 %3")
              .arg(steps, number(grid_.at(row, column)), tr(heatMetricName(metric_)));
  if (band > 1) text += tr("\n(the worst of %1 ranks in this row)").arg(band);
  return text;
}

void RankHeatMap::zoom(const QPoint& around, double factor, bool ranks) {
  if (grid_.columns <= 0) return;
  const QRect plot = plotRect();
  if (ranks) {
    const double f = std::clamp(double(around.y() - plot.top()) / plot.height(), 0.0, 1.0);
    const int total = int(grid_.order.size());
    const int count = std::clamp(int(std::round(grid_.row_count * factor)), 8, total);
    const int centre = grid_.first_row + int(f * grid_.row_count);
    window_.first_row = std::clamp(centre - int(f * count), 0, total - count);
    window_.rows = count == total ? -1 : count;
  } else {
    const double f = std::clamp(double(around.x() - plot.left()) / plot.width(), 0.0, 1.0);
    const int64_t span = grid_.last_step - grid_.first_step + 1;
    const int64_t count = std::max<int64_t>(10, int64_t(std::round(double(span) * factor)));
    const int64_t centre = grid_.first_step + int64_t(f * double(span));
    window_.first_step = std::max<int64_t>(0, centre - int64_t(f * double(count)));
    window_.last_step = window_.first_step + count - 1;
  }
  rebuild();
}

void RankHeatMap::showAll() {
  window_ = {};
  rebuild();
}

void RankHeatMap::wheelEvent(QWheelEvent* event) {
  const int delta = event->angleDelta().y();
  if (delta == 0) return;
  zoom(event->position().toPoint(), delta > 0 ? 0.8 : 1.25, event->modifiers() & Qt::ShiftModifier);
  event->accept();
}

void RankHeatMap::mouseMoveEvent(QMouseEvent* event) {
  const QString text = describe(event->position().toPoint());
  if (text.isEmpty())
    QToolTip::hideText();
  else
    QToolTip::showText(event->globalPosition().toPoint(), text, this);
}

void RankHeatMap::mouseReleaseEvent(QMouseEvent* event) {
  const int rank = event->button() == Qt::LeftButton ? rankAt(event->position().toPoint()) : -1;
  if (rank < 0) return;
  chosen_rank_ = rank;
  update();
  emit rankChosen(rank);
}

void RankHeatMap::mouseDoubleClickEvent(QMouseEvent*) {
  showAll();
}

void RankHeatMap::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setFont(chartTitleFont());
  p.setPen(palette().color(QPalette::Text));
  const QString title = run_ ? tr("Ranks × steps: %1").arg(tr(heatMetricName(metric_))) : QString();
  p.drawText(QRect(8, 4, metric_choice_->x() - 12, kTop - 8), Qt::AlignVCenter | Qt::AlignLeft,
             p.fontMetrics().elidedText(title, Qt::ElideRight, metric_choice_->x() - 12));
  const QRect plot = plotRect();
  if (grid_.columns <= 0 || plot.width() <= 0 || plot.height() <= 0) {
    p.setFont(axisLabelFont());
    p.drawText(plot, Qt::AlignCenter, tr("No steps yet"));
    return;
  }
  p.drawImage(plot, image_);  // stretched: a cell a pixel or more, never smoothed
  paintAxes(p, plot);
  paintLegend(p, plot);
}

void RankHeatMap::paintAxes(QPainter& p, const QRect& plot) const {
  p.setFont(axisLabelFont());
  const QFontMetrics fm = p.fontMetrics();
  p.setPen(QColor(0x40, 0x40, 0x40));
  p.drawRect(plot.adjusted(0, 0, -1, -1));
  const int64_t steps = grid_.last_step - grid_.first_step + 1;
  for (int64_t t : ticksOf(grid_.first_step, grid_.last_step, plot.width() / 90)) {
    const int x = plot.left() + int(double(t - grid_.first_step) / double(steps) * plot.width());
    p.drawLine(x, plot.bottom(), x, plot.bottom() + 4);
    p.drawText(QRect(x - 40, plot.bottom() + 5, 80, fm.height()), Qt::AlignHCenter,
               QString::number(t));
  }
  p.drawText(QRect(plot.left(), plot.bottom() + 5 + fm.height(), plot.width(), fm.height()),
             Qt::AlignHCenter, tr("step"));
  // Rows: rank numbers at round ticks, or the hosts' names where each host's ranks begin.
  const auto rowY = [&](int index) {
    return plot.top() + int(double(index - grid_.first_row) / grid_.row_count * plot.height());
  };
  if (!grid_.host_starts.empty()) {
    int last_y = -1000;
    for (const auto& [index, host] : grid_.host_starts) {
      if (index < grid_.first_row || index >= grid_.first_row + grid_.row_count) continue;
      const int y = rowY(index);
      p.drawLine(plot.left() - 4, y, plot.right(), y);
      if (y - last_y < fm.height()) continue;
      p.drawText(QRect(2, y, kLeft - 8, fm.height()), Qt::AlignRight,
                 fm.elidedText(QString::fromStdString(host), Qt::ElideMiddle, kLeft - 8));
      last_y = y;
    }
    return;
  }
  const int first = grid_.first_row, last = grid_.first_row + grid_.row_count - 1;
  for (int64_t t : ticksOf(first, last, plot.height() / 40)) {
    const int rank = run_->ranks()[size_t(grid_.order[size_t(t)])].rank;
    const int y = rowY(int(t));
    p.drawLine(plot.left() - 4, y, plot.left(), y);
    p.drawText(QRect(2, y - fm.height() / 2, kLeft - 8, fm.height()),
               Qt::AlignRight | Qt::AlignVCenter, QString::number(rank));
  }
  p.save();
  p.translate(12, plot.center().y());
  p.rotate(-90);
  p.drawText(QRect(-60, -fm.height(), 120, fm.height()), Qt::AlignCenter, tr("rank"));
  p.restore();
  if (chosen_rank_ >= 0) {  // the chosen rank's row, outlined
    const int at = run_->rowOfRank(chosen_rank_);
    const auto it = std::find(grid_.order.begin(), grid_.order.end(), at);
    const int index = int(it - grid_.order.begin());
    if (it != grid_.order.end() && index >= first && index <= last) {
      p.setPen(QPen(QColor(0x1f, 0x5f, 0x99), 2));
      p.drawRect(QRect(plot.left(), rowY(index) - 1, plot.width(),
                       std::max(3, rowY(index + 1) - rowY(index) + 2)));
    }
  }
}

// The colour scale at the right, low at the bottom, with its two ends' values.
void RankHeatMap::paintLegend(QPainter& p, const QRect& plot) const {
  const QRect bar(plot.right() + 12, plot.top(), 14, plot.height());
  const bool flip = heatLowIsWorse(metric_);
  for (int y = 0; y < bar.height(); ++y) {
    const double t = 1.0 - double(y) / std::max(1, bar.height() - 1);
    p.setPen(heatColour(flip ? 1 - t : t));
    p.drawLine(bar.left(), bar.top() + y, bar.right(), bar.top() + y);
  }
  p.setPen(QColor(0x40, 0x40, 0x40));
  p.drawRect(bar.adjusted(0, 0, -1, -1));
  const QFontMetrics fm = p.fontMetrics();
  const int x = bar.right() + 4, w = kRight - 30;
  const double span = double(grid_.high - grid_.low);
  p.drawText(QRect(x, bar.top(), w, fm.height()), Qt::AlignLeft, number(grid_.high, span));
  p.drawText(QRect(x, bar.bottom() - fm.height(), w, fm.height()), Qt::AlignLeft,
             number(grid_.low, span));
}

}  // namespace ranklab
