// Draws a cell's value over a bar of how full it is: the fraction a model gives under a role
// (1 = the limit), green up to 85 %, amber to the limit, red past it. The Plan page's peak
// memory per rank against the memory a rank may hold.
#pragma once

#include <QStyledItemDelegate>

namespace ranklab {

class MemoryBarDelegate : public QStyledItemDelegate {
  Q_OBJECT

 public:
  MemoryBarDelegate(int fraction_role, QObject* parent = nullptr);

  void paint(QPainter* painter, const QStyleOptionViewItem& option,
             const QModelIndex& index) const override;
  QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override;

 private:
  int fraction_role_;
};

}  // namespace ranklab
