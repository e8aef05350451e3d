// A table of many rows shown a page at a time and sortable by any column: what the analysis
// page lists of a run of a thousand ranks (its ranks, its stragglers, who is behind) without
// a thousand-row view to scroll through.
#pragma once

#include <QAbstractTableModel>
#include <QStringList>
#include <cstdint>
#include <vector>

namespace ranklab {

class PagedRowsModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  // A cell's text and what it sorts by: numbers by value, texts by their letters.
  struct Cell {
    QString text;
    double key = 0;
    bool number = false;
  };
  static Cell text(const QString& text) { return {text, 0, false}; }
  static Cell number(double value, int decimals);
  static Cell integer(int64_t value);
  static Cell percent(double fraction);  // 0.92 -> "92.0 %"

  static constexpr int kPageRows = 50;
  explicit PagedRowsModel(const QStringList& headers, int page_rows = kPageRows,
                          QObject* parent = nullptr);

  // The rows in their first order (the sort chosen last stays), from the first page.
  void setRows(std::vector<std::vector<Cell>> rows);

  int rowCount(const QModelIndex& parent = {}) const override;  // on this page
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;
  void sort(int column, Qt::SortOrder order) override;  // back to the first page

  int totalRows() const { return int(rows_.size()); }
  int page() const { return page_; }
  int pages() const;
  int firstRowShown() const { return page_ * page_rows_; }  // index into all rows
  void setPage(int page);
  // Turns to the page of the first row whose `column` holds `key`; its row on that page, or
  // -1 when no row does.
  int showRowWith(int column, double key);
  QString cellText(int row_on_page, int column) const;

 signals:
  void pageChanged();

 private:
  const Cell& cell(int row_on_page, int column) const;

  QStringList headers_;
  int page_rows_;
  std::vector<std::vector<Cell>> rows_;
  int page_ = 0;
  int sort_column_ = -1;
  Qt::SortOrder sort_order_ = Qt::AscendingOrder;
};

}  // namespace ranklab
