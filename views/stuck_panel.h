// The live page's "who is stuck" panel: shown while a rank is silent (the launcher heard
// nothing from it, not even a heartbeat, for two beats) or behind the others' steps, a row
// each (rank, host, last step, collectives completed, what it was last doing, the
// launcher's words), the silent ones first; a click on a row chooses that rank.
#pragma once

#include <QFrame>

#include "views/models/stuck_ranks_live.h"

class QLabel;
class QTableWidget;

namespace ranklab {

class StuckPanel : public QFrame {
  Q_OBJECT

 public:
  explicit StuckPanel(QWidget* parent = nullptr);
  void refresh(const RunSeries& run);  // hides itself when no rank is stuck
  void clear();
  const StuckReport& report() const { return report_; }

 signals:
  void rankChosen(int rank);

 private:
  QLabel* title_;
  QTableWidget* table_;
  StuckReport report_;
};

}  // namespace ranklab
