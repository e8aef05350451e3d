#include "views/memory_bar_delegate.h"

#include <QApplication>
#include <QPainter>
#include <algorithm>

namespace ranklab {

namespace {

constexpr double kNearLimit = 0.85;  // amber from here: little room for a larger batch

QColor barColour(double fraction) {
  if (fraction > 1) return QColor(0xd3, 0x4a, 0x4a);
  if (fraction > kNearLimit) return QColor(0xe0, 0xa8, 0x30);
  return QColor(0x5c, 0xa8, 0x6b);
}

}  // namespace

MemoryBarDelegate::MemoryBarDelegate(int fraction_role, QObject* parent)
    : QStyledItemDelegate(parent), fraction_role_(fraction_role) {}

void MemoryBarDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option,
                              const QModelIndex& index) const {
  QStyleOptionViewItem opt = option;
  initStyleOption(&opt, index);
  const QString text = opt.text;
  opt.text.clear();  // the background and selection as usual, the text over the bar
  const QWidget* widget = option.widget;
  QStyle* style = widget ? widget->style() : QApplication::style();
  style->drawControl(QStyle::CE_ItemViewItem, &opt, painter, widget);

  const double fraction = index.data(fraction_role_).toDouble();
  const QRect area = option.rect.adjusted(3, 3, -3, -3);
  painter->save();
  if (fraction > 0) {
    // The bar spans the limit at 80 % of the cell, so a candidate past it shows by how much.
    const double scale = 0.8;
    const int limit_x = area.left() + int(area.width() * scale);
    QRect bar = area;
    bar.setWidth(int(area.width() * std::min(fraction * scale, 1.0)));
    painter->fillRect(bar, barColour(fraction).lighter(fraction > 1 ? 130 : 150));
    painter->setPen(QPen(QColor(0x40, 0x40, 0x40), 1, Qt::DashLine));
    painter->drawLine(limit_x, area.top(), limit_x, area.bottom());
  }
  const bool selected = option.state & QStyle::State_Selected;
  painter->setPen(opt.palette.color(selected ? QPalette::HighlightedText : QPalette::Text));
  if (fraction > 1 && !selected) painter->setPen(QColor(0x8a, 0x10, 0x10));
  painter->drawText(area.adjusted(4, 0, -4, 0), Qt::AlignLeft | Qt::AlignVCenter, text);
  painter->restore();
}

QSize MemoryBarDelegate::sizeHint(const QStyleOptionViewItem& option,
                                  const QModelIndex& index) const {
  QSize size = QStyledItemDelegate::sizeHint(option, index);
  size.setWidth(std::max(size.width() + 40, 160));  // room for the bar beyond the text
  return size;
}

}  // namespace ranklab
