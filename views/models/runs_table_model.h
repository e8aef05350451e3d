// The runs list: one row per stored run, newest first, as the store returned them.
#pragma once

#include <QAbstractTableModel>
#include <QStringList>
#include <map>
#include <optional>
#include <vector>

#include "storage/records.h"

namespace ranklab {

class RunsTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    IdColumn,
    NameColumn,
    CreatedColumn,
    StatusColumn,
    WorldColumn,
    StrategyColumn,
    CodecColumn,
    TestAccuracyColumn,
    SamplesPerSecondColumn,
    BytesColumn,
    CompressionColumn,  // raw bytes / wire bytes
    TagsColumn,
    ColumnCount
  };
  enum Role {
    SortRole = Qt::UserRole,  // raw value (number or ISO string) for sorting
    RunIdRole,                // the run's id, same in every column
  };

  explicit RunsTableModel(QObject* parent = nullptr);

  // Replaces every row. A summary is matched to its run by id; runs without one show blanks.
  void setRuns(std::vector<RunRow> runs, const std::vector<RunSummary>& summaries,
               const std::map<int64_t, std::vector<std::string>>& tags = {});

  int64_t runId(int row) const;
  int rowOfRun(int64_t run_id) const;  // -1 when absent
  const RunRow& runAt(int row) const { return rows_.at(row).run; }
  QStringList tagsAt(int row) const { return rows_.at(row).tags; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  struct Row {
    RunRow run;
    std::optional<double> test_accuracy;  // fraction 0..1
    bool diverged = false;                // its last test loss was not finite
    std::optional<double> samples_per_s;
    int64_t bytes_tx = 0;
    int64_t bytes_raw = 0;
    QStringList tags;
  };
  QVariant display(const Row& row, int column) const;
  QVariant sortValue(const Row& row, int column) const;

  std::vector<Row> rows_;
};

}  // namespace ranklab
