// Where the time of a run of many ranks went, as a distribution: a row per kind of time
// (compute, exposed comm, waiting for the last rank, data, idle), each on its own scale from
// 0: whiskers from the least rank to the most, a box over the middle 80 % (p10 to p90), a line
// at the median, and the ranks with the most named. The one slow rank among a thousand shows
// as a long whisker with its number, where means over groups of ranks would hide it.
#pragma once

#include <QStringList>
#include <QWidget>
#include <array>

#include "views/models/breakdown_spread.h"

namespace ranklab {

class BreakdownSpreadChart : public QWidget {
  Q_OBJECT

 public:
  explicit BreakdownSpreadChart(QWidget* parent = nullptr);

  void setBreakdown(const std::vector<RankBreakdown>& ranks);
  int ranks() const { return ranks_; }
  const std::array<PartSpread, kBreakdownParts>& spreads() const { return spreads_; }
  // "wait for last rank: min 1.20 s (rank 4) · median 2.19 s · p90 … · max 9.10 s: ranks 777, …"
  QString describePart(int part) const;

  QSize sizeHint() const override { return {640, 380}; }

 protected:
  void paintEvent(QPaintEvent* event) override;
  bool event(QEvent* event) override;  // tooltips name the part's figures

 private:
  QRect rowRect(int part) const;
  void drawRow(QPainter& painter, int part) const;

  std::array<PartSpread, kBreakdownParts> spreads_{};
  int ranks_ = 0;
};

}  // namespace ranklab
