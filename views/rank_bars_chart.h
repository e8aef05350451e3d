// One stacked horizontal bar per rank, rank 0 on top, one coloured segment per part: the
// shape of the live page's time-by-phase and memory charts.
#pragma once

#include <QChartView>
#include <QColor>
#include <QString>
#include <QStringList>
#include <vector>

class QResizeEvent;

class QBarCategoryAxis;
class QBarSet;
class QHorizontalStackedBarSeries;
class QValueAxis;

namespace ranklab {

class RankBarsChart : public QChartView {
  Q_OBJECT

 public:
  struct Part {
    QString name;
    QColor colour;
  };
  RankBarsChart(const QString& title, const QString& unit, const std::vector<Part>& parts,
                QWidget* parent = nullptr);

  // More ranks than this are drawn as groups of neighbouring ranks, each bar their mean: a
  // chart has room for so many bars, and Qt Charts lays every bar out again on each change.
  // Once grouped, only as many groups as the plot has label heights for (Qt elides a
  // category's name to "…" when its band is lower than the text), re-grouped on resize.
  static constexpr int kMaxBars = 48;
  static constexpr int kMinGroups = 4;
  // How many groups fit the plot's height now, within kMinGroups..kMaxBars.
  int groupsThatFit() const;

  void clear();
  int barCount() const { return int(ranks_.size()); }
  int ranksPerBar() const { return ranks_per_bar_; }  // 1 unless the ranks were grouped
  // Bars run bottom-up, ranks top-down: the bar index of the model's row (also for tests).
  static int barOfRow(int row, int rows) { return rows - 1 - row; }
  QBarSet* partSet(int part) const { return sets_.at(size_t(part)); }

 protected:
  // values[row][part] for the ranks in `ranks`, in rows' order; each bar named "rank N",
  // or by `names` (rows' order) when given. Past kMaxBars ranks, a bar per group of ranks.
  void setBars(const std::vector<int>& ranks, const std::vector<std::vector<double>>& values,
               const QStringList& names = {});
  // Replaces the segments (a chart whose parts come with the run); the bars start afresh.
  void setParts(const std::vector<Part>& parts);

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  QHorizontalStackedBarSeries* series_;
  std::vector<QBarSet*> sets_;
  QBarCategoryAxis* rank_axis_;
  QValueAxis* value_axis_;
  void layOut(const std::vector<int>& ranks, const QStringList& names);

  std::vector<int> ranks_;  // bar i shows ranks_[i] (the first of its group)
  QStringList names_;       // their names, top down
  int ranks_per_bar_ = 1;
  // The last setBars() input while grouped, to group it again when the height changes.
  struct Input {
    std::vector<int> ranks;
    std::vector<std::vector<double>> values;
    QStringList names;
  };
  Input grouped_input_;
  int grouped_for_ = 0;  // groupsThatFit() when it was grouped
};

}  // namespace ranklab
