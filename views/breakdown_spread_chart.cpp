#include "views/breakdown_spread_chart.h"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>

#include "views/rank_breakdown_chart.h"

namespace ranklab {

namespace {

constexpr int kTitleHeight = 44;
constexpr int kFootHeight = 22;
constexpr int kNameWidth = 150;
constexpr int kMargin = 12;

QString partName(int part) {
  return RankBreakdownChart::kinds().at(size_t(part)).name;
}

QColor partColour(int part) {
  return RankBreakdownChart::kinds().at(size_t(part)).colour;
}

QString seconds(double s) {
  return QString::number(s, 'f', s < 10 ? 3 : 1) + QStringLiteral(" s");
}

QString rankList(const std::vector<int>& ranks) {
  QStringList names;
  for (int r : ranks) names << QString::number(r);
  return (ranks.size() == 1 ? QObject::tr("rank ") : QObject::tr("ranks ")) +
         names.join(QStringLiteral(", "));
}

}  // namespace

BreakdownSpreadChart::BreakdownSpreadChart(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("breakdownSpread"));
  setAutoFillBackground(true);
  setBackgroundRole(QPalette::Base);
}

void BreakdownSpreadChart::setBreakdown(const std::vector<RankBreakdown>& ranks) {
  spreads_ = breakdownSpread(ranks);
  ranks_ = int(ranks.size());
  update();
}

QString BreakdownSpreadChart::describePart(int part) const {
  const PartSpread& s = spreads_.at(size_t(part));
  if (s.min_rank < 0) return {};
  return tr("%1: min %2 (rank %3) · median %4 · p90 %5 · max %6: %7")
      .arg(partName(part), seconds(s.min))
      .arg(s.min_rank)
      .arg(seconds(s.median), seconds(s.p90), seconds(s.max), rankList(s.most));
}

QRect BreakdownSpreadChart::rowRect(int part) const {
  const int height = (this->height() - kTitleHeight - kFootHeight) / kBreakdownParts;
  return {kMargin, kTitleHeight + part * height, width() - 2 * kMargin, height};
}

void BreakdownSpreadChart::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.setRenderHint(QPainter::Antialiasing);
  QFont title = font();
  title.setBold(true);
  title.setPointSizeF(title.pointSizeF() * 1.25);
  painter.setFont(title);
  painter.drawText(QRect(0, 4, width(), kTitleHeight - 8), Qt::AlignCenter,
                   tr("Where the time of %1 ranks went").arg(ranks_));
  painter.setFont(font());
  if (ranks_ == 0) return;
  for (int part = 0; part < kBreakdownParts; ++part) drawRow(painter, part);
  painter.setPen(palette().color(QPalette::PlaceholderText));
  painter.drawText(QRect(0, height() - kFootHeight, width(), kFootHeight), Qt::AlignCenter,
                   tr("seconds over the run, each row from 0 to its most · whiskers: least to "
                      "most rank · box: p10 to p90 · line: median"));
}

void BreakdownSpreadChart::drawRow(QPainter& painter, int part) const {
  const PartSpread& s = spreads_.at(size_t(part));
  const QRect row = rowRect(part);
  const QFontMetrics metrics(font());
  const int line = metrics.height();
  painter.setPen(palette().color(QPalette::Text));
  painter.drawText(QRect(row.left(), row.top(), kNameWidth, line), Qt::AlignLeft, partName(part));
  painter.drawText(QRect(row.left() + kNameWidth, row.top(), row.width() - kNameWidth, line),
                   Qt::AlignRight,
                   tr("min %1: rank %2 · median %3 · p90 %4 · max %5: %6")
                       .arg(seconds(s.min))
                       .arg(s.min_rank)
                       .arg(seconds(s.median), seconds(s.p90), seconds(s.max), rankList(s.most)));
  const QRectF track(row.left() + kNameWidth, row.top() + line + 4, row.width() - kNameWidth,
                     std::max(8, row.height() - line - 14));
  painter.setPen(palette().color(QPalette::Mid));
  painter.drawLine(track.bottomLeft(), track.bottomRight());  // the row's own 0..max axis
  if (s.max <= 0) return;
  const auto x = [&](double v) { return track.left() + v / s.max * track.width(); };
  const double mid = track.center().y();
  painter.setPen(QPen(palette().color(QPalette::Text), 1.5));
  painter.drawLine(QPointF(x(s.min), mid), QPointF(x(s.max), mid));
  for (double v : {s.min, s.max})
    painter.drawLine(QPointF(x(v), track.top() + 4), QPointF(x(v), track.bottom() - 4));
  const QColor colour = partColour(part);
  painter.setBrush(colour);
  painter.setPen(QPen(colour.darker(150), 1));
  const double box = std::max(4.0, x(s.p90) - x(s.p10));  // seen, however alike the ranks
  painter.drawRect(
      QRectF(std::min(x(s.p10), track.right() - box), track.top(), box, track.height()));
  painter.setPen(QPen(Qt::black, 2.5));
  painter.drawLine(QPointF(x(s.median), track.top()), QPointF(x(s.median), track.bottom()));
}

bool BreakdownSpreadChart::event(QEvent* event) {
  if (event->type() != QEvent::ToolTip) return QWidget::event(event);
  const QPoint at = static_cast<QHelpEvent*>(event)->pos();
  for (int part = 0; part < kBreakdownParts; ++part)
    if (rowRect(part).contains(at)) {
      QToolTip::showText(static_cast<QHelpEvent*>(event)->globalPos(), describePart(part), this);
      return true;
    }
  QToolTip::hideText();
  return true;
}

}  // namespace ranklab
