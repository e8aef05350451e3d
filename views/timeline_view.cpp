#include "views/timeline_view.h"

#include "views/chart_style.h"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "views/models/rank_colour.h"
#include "views/models/run_series.h"

namespace ranklab {

namespace {

constexpr int kGutter = 70;  // rank labels
constexpr int kLegend = TimelineView::kLegendHeight;
constexpr int kAxis = TimelineView::kAxisHeight;
constexpr int kRight = 16;

// The strip of a sampled step's device pieces: each piece in its phase's colour, darker; the
// time between its first piece and its last grey where nothing ran.
QColor deviceBusyColour() {
  return phaseColour(forwardPhase).darker(130);
}
QColor deviceIdleColour() {
  return QColor(0xc8, 0xc8, 0xc8);
}

// A comm bar's group: the data group's in the comm phase's orange, the tensor slices' in
// teal, the pipeline's in magenta.
QColor commGroupColour(CommGroup group) {
  if (group == CommGroup::kTensor) return QColor(0x17, 0xa2, 0xb8);
  if (group == CommGroup::kPipeline) return QColor(0xc4, 0x4e, 0xa6);
  return phaseColour(commPhase);
}

double niceStep(double span, int ticks) {
  const double raw = span / std::max(1, ticks);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * magnitude >= raw) return m * magnitude;
  return 10 * magnitude;
}

// The critical path's rule under the bars of the rank the others waited for.
QColor criticalPathColour() {
  return QColor(0x10, 0x10, 0x10);
}

}  // namespace

TimelineView::TimelineView(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);  // hover without a button
  setMinimumHeight(220);
  setAutoFillBackground(true);
  QPalette p = palette();
  p.setColor(QPalette::Window, Qt::white);
  setPalette(p);
}

void TimelineView::setData(TimelineData data, bool keep_view) {
  const bool ranks_changed = data.ranks != data_.ranks;
  data_ = std::move(data);
  if (ranks_changed) setFirstRow(first_row_);    // the window kept as the run goes on
  if (!keep_view || view_end_ <= view_begin_) {  // the data moved, not the person: no viewMoved
    view_begin_ = data_.begin_ms;
    view_end_ = std::max(data_.end_ms, data_.begin_ms + 1e-3);
  }
  update();
}

void TimelineView::fit() {
  view_begin_ = data_.begin_ms;
  view_end_ = std::max(data_.end_ms, data_.begin_ms + 1e-3);
  update();
  emit viewMoved();
}

void TimelineView::zoom(double factor, double anchor_x) {
  const double anchor = msOf(anchor_x);
  const double span = std::max((view_end_ - view_begin_) / factor, 1e-3);  // 1 µs at most
  const double share = (anchor - view_begin_) / (view_end_ - view_begin_);
  view_begin_ = anchor - share * span;
  view_end_ = view_begin_ + span;
  update();
  emit viewMoved();
}

void TimelineView::pan(double dx_pixels) {
  const double ms = dx_pixels * (view_end_ - view_begin_) / std::max(1, plotRect().width());
  view_begin_ -= ms;
  view_end_ -= ms;
  update();
  emit viewMoved();
}

QRect TimelineView::plotRect() const {
  return QRect(kGutter, kLegend, std::max(1, width() - kGutter - kRight),
               std::max(1, height() - kLegend - kAxis));
}

double TimelineView::xOf(double ms) const {
  const QRect plot = plotRect();
  return plot.left() + (ms - view_begin_) / (view_end_ - view_begin_) * plot.width();
}

double TimelineView::msOf(double x) const {
  const QRect plot = plotRect();
  return view_begin_ + (x - plot.left()) / plot.width() * (view_end_ - view_begin_);
}

int TimelineView::rowsShown() const {
  const int ranks = std::max<int>(1, int(data_.ranks.size()));
  return std::clamp(plotRect().height() / kMinRowHeight, 1, ranks);
}

void TimelineView::setFirstRow(int row) {
  row = std::clamp(row, 0, std::max(0, int(data_.ranks.size()) - rowsShown()));
  const bool moved = row != first_row_;
  first_row_ = row;
  update();
  if (moved || data_.ranks.size() > size_t(rowsShown())) emit rowsMoved();
}

bool TimelineView::showRank(int rank) {
  const int row = rowOf(rank);
  if (row >= int(data_.ranks.size()) || data_.ranks[size_t(row)] != rank) return false;
  if (!rowShown(row)) setFirstRow(row - rowsShown() / 2);
  return true;
}

bool TimelineView::rowShown(int row) const {
  return row >= first_row_ && row < first_row_ + rowsShown();
}

int TimelineView::rowHeight() const {
  return std::clamp(plotRect().height() / rowsShown(), kMinRowHeight, 90);
}

int TimelineView::rowTop(int row) const {
  return plotRect().top() + (row - first_row_) * rowHeight();
}

int TimelineView::rankAt(const QPoint& point) const {
  const QRect plot = plotRect();
  if (!plot.contains(point) || data_.ranks.empty()) return -1;
  const int row = first_row_ + (point.y() - plot.top()) / rowHeight();
  return rowShown(row) && row < int(data_.ranks.size()) ? data_.ranks[size_t(row)] : -1;
}

int TimelineView::rowOf(int rank) const {
  return int(std::lower_bound(data_.ranks.begin(), data_.ranks.end(), rank) - data_.ranks.begin());
}

const TimelineBar* TimelineView::barAt(const QPoint& point) const {
  const int rank = rankAt(point);
  if (rank < 0) return nullptr;
  const double ms = msOf(point.x());
  const double slack = 2 * (view_end_ - view_begin_) / plotRect().width();  // 2 px either side
  for (const TimelineBar& bar : data_.bars)
    if (bar.rank == rank && ms >= bar.start_ms - slack && ms <= bar.end_ms + slack) return &bar;
  return nullptr;
}

QString TimelineView::describeAt(const QPoint& point) const {
  const int rank = rankAt(point);
  const double ms = msOf(point.x());
  const double slack = 4 * (view_end_ - view_begin_) / plotRect().width();  // 4 px either side
  for (const TimelineMark& mark : data_.marks)
    if (mark.rank == rank && std::abs(ms - mark.at_ms) <= slack) return describeMark(mark);
  // A hop lies in the lower part of its row, over its step's communication bar.
  const int row_y = rank >= 0 ? point.y() - rowTop(rowOf(rank)) : 0;
  if (row_y > rowHeight() * 2 / 3)
    for (const TimelineHop& hop : data_.hops)
      if (hop.rank == rank && ms >= hop.start_ms && ms <= hop.end_ms) return describeHop(hop);
  // A device piece lies in the upper part of its row, over its step's compute bars.
  if (row_y < rowHeight() / 3)
    for (const TimelineDevicePiece& piece : data_.device)
      if (piece.rank == rank && ms >= piece.start_ms && ms <= piece.end_ms)
        return describeDevicePiece(data_, piece);
  if (const TimelineBar* bar = barAt(point)) return describeBar(*bar);
  for (const TimelineSpan& span : data_.spans)
    if (rank >= 0 && span.rank == rank && ms >= span.start_ms && ms <= span.end_ms)
      return describeSpan(span);
  return {};
}

// The legend along the top: one swatch per phase, the groups, the device strip, the path.
void TimelineView::drawLegend(QPainter& painter) const {
  int x = kGutter;
  for (int p = 0; p < kPhaseCount; ++p) {
    painter.fillRect(QRect(x, 8, 12, 12), phaseColour(p));
    const QString name = QString::fromLatin1(phaseName(p));
    painter.setPen(QColor(0x20, 0x20, 0x20));
    painter.drawText(x + 16, 19, name);
    x += 24 + painter.fontMetrics().horizontalAdvance(name);
  }
  // 3D parallelism: the communication of each group in its own colour.
  for (const CommGroup group : {CommGroup::kTensor, CommGroup::kPipeline}) {
    if (std::none_of(data_.bars.begin(), data_.bars.end(),
                     [group](const TimelineBar& b) { return b.group == group; }))
      continue;
    const QString name = group == CommGroup::kTensor ? tr("comm: tensor") : tr("comm: pipeline");
    painter.fillRect(QRect(x, 8, 12, 12), commGroupColour(group));
    painter.setPen(QColor(0x20, 0x20, 0x20));
    painter.drawText(x + 16, 19, name);
    x += 24 + painter.fontMetrics().horizontalAdvance(name);
  }
  if (!data_.device.empty()) {  // the sampled steps' strip of device pieces
    for (const auto& [colour, name] : {std::pair{deviceBusyColour(), tr("device busy")},
                                       std::pair{deviceIdleColour(), tr("device idle")}}) {
      painter.fillRect(QRect(x, 8, 12, 5), colour);
      painter.setPen(QColor(0x20, 0x20, 0x20));
      painter.drawText(x + 16, 19, name);
      x += 24 + painter.fontMetrics().horizontalAdvance(name);
    }
  }
  if (std::any_of(data_.bars.begin(), data_.bars.end(),
                  [](const TimelineBar& b) { return b.on_path; })) {
    painter.fillRect(QRect(x, 15, 14, 3), criticalPathColour());
    painter.setPen(QColor(0x20, 0x20, 0x20));
    painter.drawText(x + 18, 19, tr("critical path"));
    x += 26 + painter.fontMetrics().horizontalAdvance(tr("critical path"));
  }
}

void TimelineView::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), Qt::white);
  QFont font = painter.font();
  font.setPointSize(9);
  painter.setFont(font);
  const QRect plot = plotRect();

  drawLegend(painter);
  if (data_.empty()) {
    painter.drawText(plot, Qt::AlignCenter, tr("No steps in this window yet."));
    return;
  }

  // Grid and time axis.
  const double step = niceStep(view_end_ - view_begin_, std::max(2, plot.width() / 110));
  painter.setPen(QColor(0xe0, 0xe0, 0xe0));
  for (double t = std::ceil(view_begin_ / step) * step; t <= view_end_; t += step)
    painter.drawLine(QPointF(xOf(t), plot.top()), QPointF(xOf(t), plot.bottom()));
  painter.setPen(QColor(0x30, 0x30, 0x30));
  painter.drawLine(plot.bottomLeft(), plot.bottomRight());
  const int decimals = std::max(0, int(-std::floor(std::log10(step) + 1e-9)));
  for (double t = std::ceil(view_begin_ / step) * step; t <= view_end_; t += step) {
    const QString label = QString::number(t, 'f', decimals);
    const int w = painter.fontMetrics().horizontalAdvance(label);
    painter.drawText(QPointF(xOf(t) - w / 2.0, plot.bottom() + 16), label);
  }
  QFont bold = font;
  bold.setBold(true);
  painter.setFont(bold);
  const QString title = data_.aligned_at_step >= 0
                            ? tr("ms since the window's first phase (ranks aligned at the "
                                 "barrier of step %1)")
                                  .arg(data_.aligned_at_step)
                            : tr("ms since the window's first phase (each rank's own clock)");
  painter.drawText(QRect(plot.left(), plot.bottom() + 20, plot.width(), 20), Qt::AlignHCenter,
                   title);

  // Rows.
  const int h = rowHeight();
  const size_t last_row = std::min(data_.ranks.size(), size_t(first_row_ + rowsShown()));
  for (size_t row = size_t(first_row_); row < last_row; ++row) {
    painter.setPen(rankColour(data_.ranks[row]).darker(130));
    painter.drawText(QRect(4, rowTop(int(row)), kGutter - 10, h), Qt::AlignVCenter | Qt::AlignRight,
                     tr("rank %1").arg(data_.ranks[row]));
  }
  painter.setFont(font);
  painter.setClipRect(plot);
  drawSpans(painter);
  drawBars(painter);
  drawHops(painter);
  drawDevice(painter);
  drawMarks(painter);
}

namespace {

// The phase whose colour a device piece takes: its layer pass's, the update's; the batch's
// copy and the loss head take data's and forward's.
int devicePhase(const QString& kind) {
  if (kind == "dev-bwd") return backwardPhase;
  if (kind == "dev-update") return updatePhase;
  if (kind == "dev-input") return dataPhase;
  return forwardPhase;
}

QString deviceLabel(const TimelineDevicePiece& piece) {
  if (piece.layer >= 0) return QString::number(piece.layer);
  if (piece.kind == "dev-loss") return QStringLiteral("loss");
  if (piece.kind == "dev-update") return QStringLiteral("upd");
  return QStringLiteral("in");
}

}  // namespace

// A sampled step's work on the device, on the device's own clock: a strip along the top of
// the row, the time from its first piece to its last grey (the device idle) and each piece
// over it, labelled with its layer. What stays grey is the device waiting for the host.
void TimelineView::drawDevice(QPainter& painter) const {
  std::map<std::pair<int, int64_t>, std::pair<double, double>> windows;  // rank, step
  for (const TimelineDevicePiece& piece : data_.device) {
    auto& window =
        windows.try_emplace({piece.rank, piece.step}, piece.start_ms, piece.end_ms).first->second;
    window.first = std::min(window.first, piece.start_ms);
    window.second = std::max(window.second, piece.end_ms);
  }
  const auto strip = [&](int rank, double from, double to) {
    const QRectF row = boxOf(rank, from, to, 1.0);
    return QRectF(row.left(), row.top(), row.width(), row.height() / 3);
  };
  for (const auto& [at, window] : windows) {
    if (window.second < view_begin_ || window.first > view_end_ || !rowShown(rowOf(at.first)))
      continue;
    const QRectF band = strip(at.first, window.first, window.second);
    painter.fillRect(band, deviceIdleColour());
    painter.setPen(Qt::white);
    painter.drawLine(band.bottomLeft(), band.bottomRight());
  }
  for (const TimelineDevicePiece& piece : data_.device) {
    if (piece.end_ms < view_begin_ || piece.start_ms > view_end_ || !rowShown(rowOf(piece.rank)))
      continue;
    const QRectF box = strip(piece.rank, piece.start_ms, piece.end_ms);
    painter.fillRect(box, phaseColour(devicePhase(piece.kind)).darker(130));
    painter.setPen(Qt::white);
    painter.drawLine(box.topLeft(), box.bottomLeft());
    painter.drawLine(box.topRight(), box.bottomRight());
    const QString label = deviceLabel(piece);
    if (box.width() > painter.fontMetrics().horizontalAdvance(label) + 4)
      painter.drawText(box, Qt::AlignCenter, label);
  }
}

// A sampled step opened up: its ring hops (or buckets) as a strip along the bottom of the
// row, reduce-scatter dark and all-gather light, each labelled with the chunk it sent.
void TimelineView::drawHops(QPainter& painter) const {
  const QColor comm = phaseColour(commPhase);
  for (const TimelineHop& hop : data_.hops) {
    if (hop.end_ms < view_begin_ || hop.start_ms > view_end_ || !rowShown(rowOf(hop.rank)))
      continue;
    const QRectF row = boxOf(hop.rank, hop.start_ms, hop.end_ms, 1.0);
    const QRectF box(row.left(), row.bottom() - row.height() / 3, row.width(), row.height() / 3);
    const bool second = hop.kind == "ring-ag" || hop.kind == "ps-reply";  // the way back
    painter.fillRect(box, second ? comm.lighter(150) : comm.darker(150));
    painter.setPen(Qt::white);
    painter.drawLine(box.topLeft(), box.bottomLeft());
    const QString label =
        hop.chunk >= 0 ? QString("c%1").arg(hop.chunk) : QString::number(hop.part);
    if (box.width() > painter.fontMetrics().horizontalAdvance(label) + 4)
      painter.drawText(box, Qt::AlignCenter, label);
  }
}

QRectF TimelineView::boxOf(int rank, double start_ms, double end_ms, double min_px) const {
  const int top = rowTop(rowOf(rank));
  return {QPointF(xOf(start_ms), top + 3),
          QPointF(std::max(xOf(end_ms), xOf(start_ms) + min_px), top + rowHeight() - 3)};
}

// Each step's phases, or a pipeline's passes labelled with their micro-batch.
void TimelineView::drawBars(QPainter& painter) const {
  for (const TimelineBar& bar : data_.bars) {
    if (bar.end_ms < view_begin_ || bar.start_ms > view_end_) continue;
    if (!rowShown(rowOf(bar.rank))) continue;  // a rank outside the window
    const QRectF box = boxOf(bar.rank, bar.start_ms, bar.end_ms, 1.0);
    painter.fillRect(box,
                     bar.phase == commPhase ? commGroupColour(bar.group) : phaseColour(bar.phase));
    // A pipeline pass shows its micro-batch (the schedule reads across the stages); otherwise
    // step numbers on the forward pass: the eye follows one step across ranks.
    if (bar.micro >= 0 && box.width() > 14) {
      painter.setPen(Qt::white);
      painter.drawText(box, Qt::AlignCenter, QString::number(bar.micro));
    } else if (bar.micro < 0 && bar.phase == forwardPhase && box.width() > 36) {
      painter.setPen(Qt::white);
      painter.drawText(box, Qt::AlignCenter, QString::number(bar.step));
    }
    // The critical path: a dark rule under the bars of the rank the others waited for.
    if (bar.on_path) {
      painter.setPen(QPen(criticalPathColour(), 3));
      painter.drawLine(QPointF(box.left(), box.bottom() + 1),
                       QPointF(box.right(), box.bottom() + 1));
    }
    // Consecutive passes of one phase stay apart: a thin line at each pass's start.
    if (bar.micro >= 0) {
      painter.setPen(QColor(255, 255, 255, 160));
      painter.drawLine(box.topLeft(), box.bottomLeft());
    }
  }
}

// Evaluations and checkpoints: hatched grey boxes with their name, behind the steps. Spans
// of a row that overlap (long events on separate threads, zoomed in: thousands reach across
// the view) are hatched once as their union, then outlined each, and named where a name fits
// beside the names already written: hatching each box on the others cost a second a paint.
void TimelineView::drawSpans(QPainter& painter) const {
  const QRect plot = plotRect();
  const QRectF across(plot.left() - 1, 0, plot.width() + 2, height());
  std::map<int, std::vector<std::pair<QRectF, const QString*>>> rows;  // boxes by row
  std::set<std::tuple<int, int, int>> seen;  // spans on the same pixels of a row draw once
  for (const TimelineSpan& span : data_.spans) {
    if (span.end_ms < view_begin_ || span.start_ms > view_end_) continue;
    const int row = rowOf(span.rank);
    if (!rowShown(row)) continue;
    const QRectF box = boxOf(span.rank, span.start_ms, span.end_ms, 2.0).intersected(across);
    if (seen.emplace(row, int(box.left()), int(box.right())).second)
      rows[row].push_back({box, &span.kind});
  }
  for (auto& [row, boxes] : rows) {
    std::sort(boxes.begin(), boxes.end(),
              [](const auto& a, const auto& b) { return a.first.left() < b.first.left(); });
    hatchUnion(painter, boxes);
    painter.setPen(QColor(0x55, 0x55, 0x55));
    for (const auto& [box, kind] : boxes) painter.drawRect(box);
    std::vector<QRectF> named;
    for (const auto& [box, kind] : boxes) {
      if (box.width() <= 60) continue;
      const double w = painter.fontMetrics().horizontalAdvance(*kind) + 8;
      const QRectF label(box.center().x() - w / 2, box.top(), w, box.height());
      if (std::any_of(named.begin(), named.end(),
                      [&](const QRectF& n) { return n.intersects(label); }))
        continue;
      painter.fillRect(label.adjusted(0, label.height() / 2 - 8, 0, -label.height() / 2 + 8),
                       QColor(0xee, 0xee, 0xee));
      painter.drawText(label, Qt::AlignCenter, *kind);
      named.push_back(label);
    }
  }
}

// The grey and the hatching of boxes sorted by their left edge, once over each stretch
// they cover together.
void TimelineView::hatchUnion(QPainter& painter,
                              const std::vector<std::pair<QRectF, const QString*>>& boxes) {
  const auto hatch = [&painter](const QRectF& box) {
    painter.fillRect(box, QColor(0xee, 0xee, 0xee));
    painter.fillRect(box, QBrush(QColor(0x99, 0x99, 0x99), Qt::BDiagPattern));
  };
  if (boxes.empty()) return;
  QRectF stretch = boxes.front().first;
  for (const auto& [box, kind] : boxes) {
    if (box.left() <= stretch.right()) {
      stretch.setRight(std::max(stretch.right(), box.right()));
      continue;
    }
    hatch(stretch);
    stretch = box;
  }
  hatch(stretch);
}

// Faults and failures: a red line through the rank's row at the end of the step, with a
// diamond on top and the kinds there ("fault · failure") beside it, inside the plot;
// overflows in amber (eventColour).

void TimelineView::drawMarks(QPainter& painter) const {
  const QRect plot = plotRect();
  // The kinds of the marks at each place, in their order: one label per place.
  std::map<std::pair<int, double>, QStringList> places;
  for (const TimelineMark& mark : data_.marks) {
    QStringList& kinds = places[{mark.rank, mark.at_ms}];
    if (!kinds.contains(mark.kind)) kinds << mark.kind;
  }
  for (const TimelineMark& mark : data_.marks) {
    if (mark.at_ms < view_begin_ || mark.at_ms > view_end_ || !rowShown(rowOf(mark.rank))) continue;
    const auto place = places.find({mark.rank, mark.at_ms});
    if (place == places.end()) continue;  // an earlier mark at the same place drew it
    const QStringList kinds = place->second;
    places.erase(place);
    const QColor colour = eventColour(mark.kind);
    const double x = xOf(mark.at_ms);
    const int top = rowTop(rowOf(mark.rank));
    painter.setPen(QPen(colour, 2));
    painter.drawLine(QPointF(x, top + 2), QPointF(x, top + rowHeight() - 2));
    const QPointF diamond[] = {
        {x, double(top)}, {x + 5, top + 5.0}, {x, top + 10.0}, {x - 5, top + 5.0}};
    painter.setBrush(colour);
    painter.drawPolygon(diamond, 4);
    painter.setBrush(Qt::NoBrush);
    const QString label = kinds.join(QStringLiteral(" · "));
    const int w = painter.fontMetrics().horizontalAdvance(label);
    const double left = x + 8 + w <= plot.right() ? x + 8 : x - 8 - w;
    painter.fillRect(QRectF(left - 3, top + 1, w + 6, 15), QColor(255, 255, 255, 230));
    painter.drawText(QPointF(left, top + 12), label);
  }
}

void TimelineView::wheelEvent(QWheelEvent* event) {
  // Shift: other ranks, a few rows a notch (X11 turns Shift+wheel into a horizontal wheel).
  const QPoint delta = event->angleDelta();
  if (event->modifiers() & Qt::ShiftModifier) {
    const int notches = (delta.y() != 0 ? delta.y() : delta.x()) / 120;
    setFirstRow(first_row_ - 3 * notches);
    event->accept();
    return;
  }
  const double notches = delta.y() / 120.0;
  zoom(std::pow(1.25, notches), event->position().x());
  event->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* event) {
  if (event->button() == Qt::LeftButton) {
    dragging_ = true;
    last_drag_ = event->pos();
    setCursor(Qt::ClosedHandCursor);
  }
}

void TimelineView::mouseMoveEvent(QMouseEvent* event) {
  if (dragging_) {
    pan(event->pos().x() - last_drag_.x());
    last_drag_ = event->pos();
    return;
  }
  const QString text = describeAt(event->pos());
  if (text.isEmpty())
    QToolTip::hideText();
  else
    QToolTip::showText(event->globalPosition().toPoint(), text, this);
}

void TimelineView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  setFirstRow(first_row_);
}

void TimelineView::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() == Qt::LeftButton) {
    dragging_ = false;
    unsetCursor();
  }
}

}  // namespace ranklab
