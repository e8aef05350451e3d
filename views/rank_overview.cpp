#include "views/rank_overview.h"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>

#include "views/rank_heat_map.h"  // heatColour

namespace ranklab {

RankOverview::RankOverview(QWidget* parent) : QWidget(parent) {
  setFixedWidth(kWidth);
  setMouseTracking(true);
  setCursor(Qt::PointingHandCursor);
  setToolTip(tr("Every rank, coloured by its own work in these steps: click to show it"));
}

void RankOverview::setRanks(std::vector<int> ranks, std::vector<double> own_ms) {
  ranks_ = std::move(ranks);
  own_ms_ = std::move(own_ms);
  own_ms_.resize(ranks_.size(), 0.0);
  update();
}

void RankOverview::setWindow(int first_row, int rows) {
  first_row_ = first_row;
  rows_ = rows;
  update();
}

double RankOverview::yOfRow(int row) const {
  const QRect area = contentsRect();
  return area.top() + double(row) / std::max<size_t>(1, ranks_.size()) * area.height();
}

int RankOverview::rowAt(int y) const {
  const QRect area = contentsRect();
  const double share = double(y - area.top()) / std::max(1, area.height());
  return std::clamp(int(share * double(ranks_.size())), 0, std::max(0, int(ranks_.size()) - 1));
}

void RankOverview::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  const QRect area = contentsRect();
  painter.fillRect(area, QColor(0xf4, 0xf4, 0xf4));
  if (ranks_.empty()) return;
  const auto [lo, hi] = std::minmax_element(own_ms_.begin(), own_ms_.end());
  const double range = std::max(*hi - *lo, 1e-9);
  const size_t n = ranks_.size();
  for (int y = 0; y < area.height(); ++y) {  // a pixel row: the most of its band of ranks
    const size_t from = size_t(y) * n / size_t(area.height());
    const size_t to = std::max(from + 1, size_t(y + 1) * n / size_t(area.height()));
    if (from >= n) break;
    const double most =
        *std::max_element(own_ms_.begin() + long(from), own_ms_.begin() + long(std::min(to, n)));
    painter.setPen(heatColour((most - *lo) / range));
    painter.drawLine(area.left(), area.top() + y, area.right(), area.top() + y);
  }
  painter.setPen(QPen(QColor(0x20, 0x20, 0x20), 2));
  painter.setBrush(Qt::NoBrush);
  const double top = yOfRow(first_row_), bottom = yOfRow(first_row_ + rows_);
  painter.drawRect(QRectF(area.left() + 1, top, area.width() - 2, std::max(3.0, bottom - top)));
}

QString RankOverview::describeAt(int y) const {
  if (ranks_.empty()) return {};
  const int row = rowAt(y);
  const int next = std::max(row + 1, rowAt(y + 1));
  const auto most = std::max_element(own_ms_.begin() + row, own_ms_.begin() + next);
  const int rank = ranks_[size_t(most - own_ms_.begin())];
  const QString ranks =
      next - row > 1 ? tr("ranks %1–%2").arg(ranks_[size_t(row)]).arg(ranks_[size_t(next - 1)])
                     : tr("rank %1").arg(ranks_[size_t(row)]);
  return tr("%1: own work up to %2 ms (rank %3)").arg(ranks).arg(*most, 0, 'f', 1).arg(rank);
}

void RankOverview::mousePressEvent(QMouseEvent* event) {
  if (event->button() == Qt::LeftButton) emit rowChosen(rowAt(int(event->position().y())));
}

void RankOverview::mouseMoveEvent(QMouseEvent* event) {
  const int y = int(event->position().y());
  if (event->buttons() & Qt::LeftButton) emit rowChosen(rowAt(y));
  QToolTip::showText(event->globalPosition().toPoint(), describeAt(y), this);
}

}  // namespace ranklab
