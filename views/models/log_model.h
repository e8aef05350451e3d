// Output lines of a run, each tagged with the rank that printed it (-1: mpirun or the
// launcher). Bounded: the oldest lines go first. Filter by rank with a proxy on RankRole.
#pragma once

#include <QAbstractListModel>
#include <QString>
#include <deque>

namespace ranklab {

class LogModel : public QAbstractListModel {
  Q_OBJECT

 public:
  enum Role { RankRole = Qt::UserRole, StderrRole };
  static constexpr int kDefaultMaxLines = 20000;

  explicit LogModel(QObject* parent = nullptr, int max_lines = kDefaultMaxLines);

  void append(int rank, bool is_stderr, const QString& text);
  void clear();
  QList<int> ranks() const;  // every rank that printed something, ascending

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;

 signals:
  void rankSeen(int rank);  // the first line of a rank

 private:
  struct Line {
    int rank;
    bool is_stderr;
    QString text;
  };
  int max_lines_;
  std::deque<Line> lines_;
  QList<int> ranks_;
};

}  // namespace ranklab
