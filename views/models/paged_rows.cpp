#include "views/models/paged_rows.h"

#include <QLocale>
#include <algorithm>

namespace ranklab {

PagedRowsModel::Cell PagedRowsModel::number(double value, int decimals) {
  return {QString::number(value, 'f', decimals), value, true};
}

PagedRowsModel::Cell PagedRowsModel::integer(int64_t value) {
  return {QString::number(value), double(value), true};
}

PagedRowsModel::Cell PagedRowsModel::percent(double fraction) {
  return {QString::number(100 * fraction, 'f', 1) + QStringLiteral(" %"), fraction, true};
}

PagedRowsModel::PagedRowsModel(const QStringList& headers, int page_rows, QObject* parent)
    : QAbstractTableModel(parent), headers_(headers), page_rows_(std::max(1, page_rows)) {}

void PagedRowsModel::setRows(std::vector<std::vector<Cell>> rows) {
  beginResetModel();
  rows_ = std::move(rows);
  page_ = 0;
  endResetModel();
  if (sort_column_ >= 0) sort(sort_column_, sort_order_);
  emit pageChanged();
}

int PagedRowsModel::pages() const {
  return std::max(1, int((rows_.size() + size_t(page_rows_) - 1) / size_t(page_rows_)));
}

int PagedRowsModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid()) return 0;
  return std::clamp(totalRows() - firstRowShown(), 0, page_rows_);
}

int PagedRowsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(headers_.size());
}

const PagedRowsModel::Cell& PagedRowsModel::cell(int row_on_page, int column) const {
  return rows_.at(size_t(firstRowShown() + row_on_page)).at(size_t(column));
}

QString PagedRowsModel::cellText(int row_on_page, int column) const {
  return cell(row_on_page, column).text;
}

QVariant PagedRowsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const Cell& c = cell(index.row(), index.column());
  if (role == Qt::DisplayRole) return c.text;
  if (role == Qt::TextAlignmentRole)
    return QVariant::fromValue(c.number ? Qt::AlignRight | Qt::AlignVCenter
                                        : Qt::AlignLeft | Qt::AlignVCenter);
  return {};
}

QVariant PagedRowsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Horizontal) return headers_.value(section);
  return firstRowShown() + section + 1;  // the row's place in the whole sorted table
}

void PagedRowsModel::sort(int column, Qt::SortOrder order) {
  if (column < 0 || column >= columnCount()) return;
  sort_column_ = column;
  sort_order_ = order;
  beginResetModel();
  const auto less = [column](const std::vector<Cell>& a, const std::vector<Cell>& b) {
    const Cell &x = a[size_t(column)], &y = b[size_t(column)];
    if (x.number != y.number) return x.number;  // numbers before texts ("–")
    return x.number ? x.key < y.key : x.text.localeAwareCompare(y.text) < 0;
  };
  if (order == Qt::AscendingOrder)
    std::stable_sort(rows_.begin(), rows_.end(), less);
  else
    std::stable_sort(rows_.begin(), rows_.end(),
                     [&less](const auto& a, const auto& b) { return less(b, a); });
  page_ = 0;
  endResetModel();
  emit pageChanged();
}

void PagedRowsModel::setPage(int page) {
  page = std::clamp(page, 0, pages() - 1);
  if (page == page_) return;
  beginResetModel();
  page_ = page;
  endResetModel();
  emit pageChanged();
}

int PagedRowsModel::showRowWith(int column, double key) {
  for (size_t i = 0; i < rows_.size(); ++i) {
    const Cell& c = rows_[i].at(size_t(column));
    if (!c.number || c.key != key) continue;
    setPage(int(i) / page_rows_);
    return int(i) % page_rows_;
  }
  return -1;
}

}  // namespace ranklab
