#include "views/models/log_model.h"

#include <QBrush>
#include <algorithm>

#include "views/models/rank_colour.h"

namespace ranklab {

LogModel::LogModel(QObject* parent, int max_lines)
    : QAbstractListModel(parent), max_lines_(max_lines) {}

void LogModel::append(int rank, bool is_stderr, const QString& text) {
  if (int(lines_.size()) >= max_lines_) {
    beginRemoveRows({}, 0, 0);
    lines_.pop_front();
    endRemoveRows();
  }
  const int row = int(lines_.size());
  beginInsertRows({}, row, row);
  lines_.push_back({rank, is_stderr, text});
  endInsertRows();
  if (!ranks_.contains(rank)) {
    ranks_.insert(std::lower_bound(ranks_.begin(), ranks_.end(), rank), rank);
    emit rankSeen(rank);
  }
}

void LogModel::clear() {
  beginResetModel();
  lines_.clear();
  ranks_.clear();
  endResetModel();
}

QList<int> LogModel::ranks() const {
  return ranks_;
}

int LogModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(lines_.size());
}

QVariant LogModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const Line& line = lines_[size_t(index.row())];
  switch (role) {
    case Qt::DisplayRole:
      return (line.rank < 0 ? QStringLiteral("[mpirun] ")
                            : QStringLiteral("[rank %1] ").arg(line.rank)) +
             line.text;
    case Qt::ForegroundRole:
      return QBrush(line.is_stderr ? rankColour(line.rank) : rankColour(line.rank).darker(125));
    case Qt::BackgroundRole:  // stderr stands out from the same rank's stdout
      return line.is_stderr ? QVariant(QBrush(QColor(0xff, 0xee, 0xee))) : QVariant();
    case RankRole:
      return line.rank;
    case StderrRole:
      return line.is_stderr;
  }
  return {};
}

}  // namespace ranklab
