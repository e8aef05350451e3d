#include "views/chart_style.h"

#include <QAbstractAxis>
#include <QChart>
#include <QLegend>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

namespace ranklab {

QColor eventColour(const QString& kind) {
  if (kind == "overflow") return QColor(0xd9, 0x8c, 0x00);
  if (kind == "restart" || kind == "resumed") return QColor(0x2e, 0x7d, 0x32);
  return QColor(0xc6, 0x28, 0x28);
}

static QFont sized(int points, bool bold) {
  QFont f;
  f.setPointSize(points);
  f.setBold(bold);
  return f;
}

QFont chartTitleFont() {
  return sized(11, true);
}
QFont axisTitleFont() {
  return sized(10, true);
}
QFont axisLabelFont() {
  return sized(9, false);
}
QFont legendFont() {
  return sized(10, false);
}

void styleChart(QChart* chart, const QString& title) {
  chart->setTheme(QChart::ChartThemeLight);
  chart->setBackgroundBrush(Qt::white);
  chart->setTitle(title);
  chart->setTitleFont(chartTitleFont());
  chart->setTitleBrush(QColor(0x20, 0x20, 0x20));
  chart->setMargins(QMargins(6, 4, 6, 4));
  chart->setAnimationOptions(QChart::NoAnimation);  // live data: animations only lag
  chart->legend()->setVisible(true);
  chart->legend()->setAlignment(Qt::AlignTop);
  chart->legend()->setFont(legendFont());
  chart->legend()->setLabelColor(QColor(0x20, 0x20, 0x20));
}

void styleAxis(QAbstractAxis* axis, const QString& title) {
  axis->setTitleText(title);
  axis->setTitleFont(axisTitleFont());
  axis->setTitleBrush(QColor(0x20, 0x20, 0x20));
  axis->setLabelsFont(axisLabelFont());
  axis->setLabelsColor(QColor(0x30, 0x30, 0x30));
  axis->setGridLineColor(QColor(0xe0, 0xe0, 0xe0));
}

void fitAxis(QValueAxis* axis, double low, double high, int ticks, bool whole) {
  if (!(high > low)) high = low + 1;
  const double raw = (high - low) / std::max(1, ticks - 1);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * magnitude;
    if (step >= raw) break;
  }
  if (whole) step = std::max(1.0, std::round(step));
  axis->setTickType(QValueAxis::TicksDynamic);
  axis->setTickAnchor(0);
  axis->setTickInterval(step);
  axis->setRange(std::floor(low / step) * step, std::ceil(high / step) * step);
  // Beyond a million (a diverged loss reaches 1e18), "%f" would print 28 digits: exponents.
  if (std::max(std::fabs(low), std::fabs(high)) >= 1e6) {
    axis->setLabelFormat(QStringLiteral("%.2g"));
    return;
  }
  const int decimals = whole ? 0 : std::max(0, int(-std::floor(std::log10(step) + 1e-9)));
  axis->setLabelFormat(QStringLiteral("%.%1f").arg(decimals));
}

}  // namespace ranklab
